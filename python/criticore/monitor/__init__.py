"""The bandwidth monitor of blin-bandwidth-monitor: profiling programs
(`criticore profile`), its overhead tables (`criticore tables`), the
simulated and real experiments (`criticore experiment`) and their plots."""
