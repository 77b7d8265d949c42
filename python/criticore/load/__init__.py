"""Memory load (blin-bandwidth-monitor §3.1): the generator
(:mod:`criticore.load.generator`), its bandwidth/latency sweep
(:mod:`criticore.load.sweep`) and their rendering."""
