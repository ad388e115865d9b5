"""Camera frames in, detected components (in table coordinates) out. Knows nothing of rules.

Built by the recognition issues; the package exists now so the layout is in place.
"""
