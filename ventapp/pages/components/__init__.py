"""Pure functions that return ``rx.Component``s for the pages."""
