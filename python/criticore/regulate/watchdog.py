"""The regulator's watchdog process: `python -m criticore.regulate.watchdog`.

It reads what the regulator stopped or froze from stdin and, when the
regulator's end of the pipe closes (however the regulator ended), resumes and
thaws all of it (crates/criticore-rt/src/watchdog.rs).
"""

import criticore._core as _core

if __name__ == "__main__":
    _core.watchdog_main()
