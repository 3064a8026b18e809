"""Analyses on a finished Design: layout, media, BOM, collisions."""
