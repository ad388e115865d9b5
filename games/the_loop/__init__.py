"""The LOOP (cooperative time travel): agents against Dr. Foo, whose turns the assistant runs.

`engine` holds the rules (`TheLoop`), `foo` Dr. Foo's automated turn and the physical-table API, `effects` the
artifact effect primitives, `catalogue` the JSON catalogue and scenario loaders, `policy` the simple agent.
"""
