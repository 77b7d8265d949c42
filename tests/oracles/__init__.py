"""Reference implementations the tests hold the engine against: the MC²
analysis in exact arithmetic (mc2_reference), the classic response-time tests
(classic_reference) and seeded LLC-way instances (llc_ways_instances)."""
