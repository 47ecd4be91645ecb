"""Each platform's facts, one module per platform (`Site`, shared/platforms/site.py): its
domains and canonical form, its video URLs, walls and titles, whether it is a
deletable-content site. Read through `shared.platforms.registry`, never one by one."""
