"""The LOOP's board seen from the camera: where the board lies in the frame, and what stands on its Eras.

`register` finds the board (its enrolled picture matched against the frame); `rectify` cuts the Era ring out of
the frame as the board's own picture shows it; `cubes` counts the rift, energy and blue cubes per Era on that cut.
"""
