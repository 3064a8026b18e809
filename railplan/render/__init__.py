"""Renderers over a finished Design: CSV, JSON, PDF, scripts. The only package that imports reportlab."""
