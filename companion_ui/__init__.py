"""What a player meets: the `tabletop` command line, the terminal game, and (later) the FastAPI companion page.

It sits at the end of the one-way flow vision -> tracker -> games -> announcements/UI, so it is the only
package allowed to import from all the others.
"""
