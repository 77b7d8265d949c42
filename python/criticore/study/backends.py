"""Where a study's chunks run: in this process (the kernel over rayon) or on Dask."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
from pathlib import Path
from typing import Iterator

from criticore._core import __version__
from criticore.study.parameters import StudyParams, _input_error
from criticore.study.store import evaluate_chunk


# --------------------------------------------------------------------------- backends


class _LocalBackend:
    """Chunks through the kernel in this process; rayon runs each chunk's points on every core.

    Two chunks are in flight at a time (the kernel releases the GIL), so the cores stay
    busy while one chunk waits for its slowest point; the rayon pool is shared."""

    name = "local"
    in_flight = 2

    def __init__(self) -> None:
        self.threads = os.cpu_count() or 1

    def chunk_size(self, n: int) -> int:
        return max(1, min(4 * self.threads, math.ceil(n / self.in_flight)))

    def run(self, chunks: list[str], params: StudyParams) -> Iterator[tuple[int, dict]]:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        args = (params.seed, params.half_width, params.z, params.batch, params.max_systems, params.preset)

        def result(get):
            try:
                return get()[1]
            except ValueError as e:  # the kernel refused its input: a bug here, reported in one line
                raise RuntimeError(f"study kernel: {str(e).splitlines()[0]}") from None

        if len(chunks) == 1:
            yield 0, result(lambda: evaluate_chunk(chunks[0], *args))
            return
        pool = ThreadPoolExecutor(max_workers=self.in_flight, thread_name_prefix="criticore-study")
        try:
            futures = {pool.submit(evaluate_chunk, c, *args): i for i, c in enumerate(chunks)}
            for f in as_completed(futures):
                yield futures[f], result(f.result)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def versions(self) -> dict:
        return {}

    def close(self) -> None:
        pass


DASK_MISSING = 'Dask is not installed; pip install "dask[distributed]"'


class _DaskBackend:
    """Chunks as Dask tasks; each task runs the same kernel (rayon inside, on the worker's cores)."""

    def __init__(self, target, workers: int | None, out: Path):
        try:
            import distributed
        except ImportError:
            raise _input_error(out, "--dask", DASK_MISSING) from None
        self._cluster = None
        self._own_client = True
        if isinstance(target, distributed.Client):
            self.client = target
            self._own_client = False
            self.name = "dask (given client)"
        elif target == "local":
            n = workers or (os.cpu_count() or 1)
            rayon = max(1, (os.cpu_count() or 1) // n)
            try:
                self._cluster = distributed.LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # Task failures reach us through the futures (one error line); keep the
                    # scheduler's and workers' shutdown chatter off the terminal.
                    silence_logs=logging.CRITICAL,
                    env={"RAYON_NUM_THREADS": str(rayon)},
                )
                self.client = distributed.Client(self._cluster)
            except Exception as e:  # noqa: BLE001
                self.close()
                raise _input_error(out, "--dask", f"cannot start a local cluster: {str(e).splitlines()[0]}") from None
            self.name = f"dask LocalCluster ({n} workers)"
        else:
            try:
                self.client = distributed.Client(target, timeout="20s")
            except Exception as e:  # noqa: BLE001
                raise _input_error(out, "--dask", f"cannot connect to {target}: {str(e).splitlines()[0] or type(e).__name__}") from None
            self.name = f"dask {target}"
        self._distributed = distributed

    def threads(self) -> int:
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001
            return 1

    def chunk_size(self, n: int) -> int:
        # About three tasks per worker thread and wave, at most 32 points per task.
        return max(1, min(32, math.ceil(n / (3 * self.threads()))))

    def run(self, chunks: list[str], params: StudyParams) -> Iterator[tuple[int, dict]]:
        futures = {}
        for i, c in enumerate(chunks):
            f = self.client.submit(
                evaluate_chunk, c, params.seed, params.half_width, params.z, params.batch, params.max_systems, params.preset, pure=False
            )
            futures[f] = i
        try:
            for f in self._distributed.as_completed(list(futures)):
                try:
                    version, cols = f.result()
                except Exception as e:  # noqa: BLE001  (a worker's failure, reported in one line)
                    first = str(e).splitlines()[0] if str(e) else ""
                    raise RuntimeError(f"a Dask task failed: {type(e).__name__}: {first}") from None
                if version != __version__:
                    raise RuntimeError(
                        f"a worker runs criticore {version}, this process {__version__}; install the same version everywhere"
                    )
                yield futures[f], cols
                f.release()
        finally:
            for f in futures:
                f.cancel()

    def versions(self) -> dict:
        import dask

        return {"dask": dask.__version__, "distributed": self._distributed.__version__}

    def close(self) -> None:
        if self._own_client and getattr(self, "client", None) is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()


def _backend(dask, workers: int | None, out: Path):
    if dask is None:
        if workers is not None:
            raise _input_error(out, "--workers", "only with --dask local")
        return _LocalBackend()
    if isinstance(dask, str):
        if dask != "local" and not re.match(r"^[a-z][a-z0-9+.-]*://\S+$", dask):
            raise _input_error(out, "--dask", f"{dask!r}: expected local or a scheduler address like tcp://host:8786")
        if workers is not None and dask != "local":
            raise _input_error(out, "--workers", "only with --dask local (a remote cluster has its own workers)")
        if workers is not None and workers < 1:
            raise _input_error(out, "--workers", "must be at least 1")
    return _DaskBackend(dask, workers, out)
