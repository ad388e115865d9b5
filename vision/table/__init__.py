"""The table as a plane in millimetres: printed play mats with markers and zones (issue 20)."""
