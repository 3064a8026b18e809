"""CP-SAT models: the only package that imports ortools."""
