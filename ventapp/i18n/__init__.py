"""Message catalogues (placeholder filled in below)."""
