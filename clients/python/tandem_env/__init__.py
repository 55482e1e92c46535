"""A Gymnasium-style vector-env client of `tandem sim serve-env` (docs/env-server.md).

Standard library + `websockets` + `msgpack` (Debian: python3-websockets, python3-msgpack);
numpy is used when it is installed and never needed.

    from tandem_env import VectorEnv
    with VectorEnv("ws://127.0.0.1:8765") as env:
        obs, info = env.reset(seed=0, tier=1)
        for _ in range(1000):
            obs, reward, terminated, truncated, info = env.step(actions)   # actions: [N][14]

Arrays travel as openpi's msgpack_numpy maps. Without numpy they come back as `Array` (a flat
`array.array` with a `.shape`), indexable per environment with `row(i)`.
"""

from __future__ import annotations

import array
import asyncio
import inspect
import sys
from typing import Any, Sequence

import msgpack
import websockets

try:  # numpy is optional
    import numpy as _np  # type: ignore
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

__all__ = ["VectorEnv", "EnvServerError", "Array"]

_TYPECODES = {"<f4": "f", "<f8": "d", "|u1": "B", "|b1": "B", "|i1": "b", "<i4": "i", "<u4": "I", "<i8": "q", "<u8": "Q", "<i2": "h", "<u2": "H"}


class EnvServerError(RuntimeError):
    """The server refused a request (bad actions, unknown tier, ...) or closed the connection."""


class Array(array.array):
    """A flat array with a shape, what the server's ndarrays decode to without numpy."""

    shape: tuple

    def row(self, i: int) -> list:
        width = 1
        for d in self.shape[1:]:
            width *= d
        return list(self[i * width:(i + 1) * width])


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict) and (b"__ndarray__" in obj or "__ndarray__" in obj):
        get = lambda k: obj[k.encode()] if k.encode() in obj else obj[k]
        dtype, shape, data = get("dtype"), tuple(get("shape")), get("data")
        if isinstance(dtype, bytes):
            dtype = dtype.decode()
        if _np is not None:
            return _np.frombuffer(data, dtype=_np.dtype(dtype)).reshape(shape).copy()
        code = _TYPECODES[dtype]
        a = Array(code)
        a.frombytes(data)
        if sys.byteorder != "little" and a.itemsize > 1:
            a.byteswap()
        if dtype == "|b1":
            a = Array("B", a)
        a.shape = shape
        return a
    return obj


def _ndarray_f32(rows: Any, n: int, width: int) -> dict:
    if _np is not None and isinstance(rows, _np.ndarray):
        a = _np.ascontiguousarray(rows, dtype="<f4")
        shape = list(a.shape)
        data = a.tobytes()
    else:
        flat = array.array("f")
        shape = [len(rows)]
        inner = None
        for r in rows:
            r = list(r)
            inner = len(r) if inner is None else inner
            if len(r) != inner:
                raise ValueError("actions rows differ in length")
            flat.extend(float(x) for x in r)
        shape.append(inner or 0)
        if sys.byteorder != "little":
            flat.byteswap()
        data = flat.tobytes()
    return {b"__ndarray__": True, b"data": data, b"dtype": "<f4", b"shape": shape}


class VectorEnv:
    """N environments of one task, stepped together (Gymnasium vector-env style, autoreset)."""

    def __init__(self, url: str, *, open_timeout: float = 30.0, api_key: str | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        options: dict[str, Any] = {}
        if api_key:
            # The header's keyword is extra_headers up to websockets 13, additional_headers after.
            params = inspect.signature(websockets.connect).parameters
            options["additional_headers" if "additional_headers" in params else "extra_headers"] = {"Authorization": f"Api-Key {api_key}"}

        async def _open() -> Any:
            # websockets' client binds to the loop running it, so it is made inside this loop.
            return await websockets.connect(url, max_size=None, compression=None, open_timeout=open_timeout, **options)

        self._ws = self._run(_open())
        hello = self._recv()
        if hello.get("type") != "hello":
            raise EnvServerError(f"not a tandem env server (first message: {hello!r:.80})")
        self.metadata = hello
        self.num_envs: int = hello["envs"]
        self.action_dim: int = hello["action_dim"]

    # -- Gymnasium-style API -------------------------------------------------------------
    def reset(self, *, seed: int, tier: int | None = None, layout: dict | None = None, options: dict | None = None):
        req: dict = {"type": "reset", "seed": seed}
        if tier is not None:
            req["tier"] = tier
        if layout is not None:
            req["layout"] = layout
        if options is not None:
            req["options"] = options
        ans = self._request(req)
        return ans["obs"], ans["info"]

    def step(self, actions: Sequence[Sequence[float]] | Any):
        ans = self._request({"type": "step", "actions": _ndarray_f32(actions, self.num_envs, self.action_dim)})
        return ans["obs"], ans["reward"], ans["terminated"], ans["truncated"], ans["info"]

    def send_raw(self, message: dict) -> dict:
        """Sends any message and returns the answer, errors included (for tests of bad input)."""
        self._send(message)
        return self._recv()

    def close(self) -> None:
        if self._ws is not None:
            self._run(self._ws.close())
            self._ws = None
        self._loop.close()

    def __enter__(self) -> "VectorEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- wire ----------------------------------------------------------------------------
    def _run(self, coro: Any) -> Any:
        return self._loop.run_until_complete(coro)

    def _send(self, message: dict) -> None:
        self._run(self._ws.send(msgpack.packb(message, use_bin_type=True)))

    def _recv(self) -> dict:
        try:
            data = self._run(self._ws.recv())
        except websockets.ConnectionClosed as e:
            raise EnvServerError(f"the env server closed the connection ({e.code} {e.reason})") from None
        if isinstance(data, str):
            raise EnvServerError(data)
        return msgpack.unpackb(data, raw=False, object_hook=_decode, strict_map_key=False)

    def _request(self, message: dict) -> dict:
        self._send(message)
        ans = self._recv()
        if ans.get("type") == "error":
            raise EnvServerError(ans["message"])
        return ans
