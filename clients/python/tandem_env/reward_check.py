"""Steps N environments K steps with scripted scoops (or seeded random joint targets) and prints, as one JSON line,
the sum of the rewards the client saw and the sum the server's task events imply (+1 each first
arrival of a part in its correct slot, −1 each knock-out; other tasks: the events' own rewards).

    python3 -m tandem_env.reward_check ws://127.0.0.1:8765 --steps 10000 --seed 0 [--tier 1]

Exit 0 when the two sums agree, 1 when they differ.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from . import VectorEnv


# sort-from-tote scoops for the left arm (joint targets from the rig's IK, tandem's table frame):
# fingers down into the tote at five spots, a lift, a swing over the table beside the sorter.
SCOOP_LOW = [
    [-0.197, 1.627, 0.876, -0.82, 0.0, 0.0],
    [0.0, 1.959, 1.297, -0.909, 0.0, 0.0],
    [0.111, 2.346, 1.915, -1.14, 0.0, 0.0],
    [0.322, 1.842, 1.137, -0.865, 0.0, 0.0],
    [-0.197, 2.164, 1.608, -1.015, 0.0, 0.0],
]
SCOOP_HIGH = [0.0, 1.331, 1.248, -1.069, 0.0, 0.0]
SCOOP_DROP = [-0.7, 1.331, 1.248, -1.069, 0.0, 0.0]
RIGHT_HOME = [0.0] * 6 + [1.0]


def scoop(k: int, env: int) -> list:
    """The left arm's target at step k: down open, close, lift, swing out, let go (150 steps a cycle)."""
    cycle, t = divmod(k + 37 * env, 150)
    low = SCOOP_LOW[(cycle + env) % len(SCOOP_LOW)]
    if t < 40:
        left = low + [1.0]
    elif t < 60:
        left = low + [0.0]
    elif t < 90:
        left = SCOOP_HIGH + [0.0]
    elif t < 120:
        left = SCOOP_DROP + [0.0]
    else:
        left = SCOOP_DROP + [1.0]
    return left + RIGHT_HOME


def implied(event: dict) -> float:
    kind = event.get("kind")
    if kind == "in-correct-slot":
        return 1.0 if event.get("reward", 0) > 0 else 0.0
    if kind == "knocked-out":
        return -1.0
    if kind in ("picked", "in-wrong-slot", "off-table"):
        return 0.0
    return float(event.get("reward", 0))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tier", type=int)
    p.add_argument("--pattern", choices=["scoop", "random"], default="scoop", help="scoop: the left arm scoops parts out of the tote and drops them beside the sorter; random: random joint targets")
    p.add_argument("--hold", type=int, default=25, help="steps each random target is held")
    p.add_argument("--episode-seconds", type=float)
    a = p.parse_args(argv)
    rng = random.Random(a.seed)
    with VectorEnv(a.url) as env:
        n, low, high = env.num_envs, env.metadata["action_low"], env.metadata["action_high"]
        options = {"episode_seconds": a.episode_seconds} if a.episode_seconds else None
        env.reset(seed=a.seed, tier=a.tier, options=options)
        seen = 0.0
        from_events = 0.0
        episodes = 0
        counts: dict = {}
        actions = [[0.0] * len(low) for _ in range(n)]
        t0 = time.perf_counter()
        for k in range(a.steps):
            if a.pattern == "scoop":
                actions = [scoop(k, i) for i in range(n)]
            elif k % a.hold == 0:
                # Random targets in the middle 80 % of each joint's range, grippers open or closed.
                actions = [[lo + (hi - lo) * (0.1 + 0.8 * rng.random()) for lo, hi in zip(low, high)] for _ in range(n)]
            _, reward, terminated, truncated, info = env.step(actions)
            seen += sum(float(r) for r in reward)
            for env_events in info["events"]:
                for e in env_events:
                    from_events += implied(e)
                    counts[e["kind"]] = counts.get(e["kind"], 0) + 1
            episodes += sum(1 for f in info["final"] if f is not None)
        wall = time.perf_counter() - t0
    print(json.dumps({"envs": n, "steps": a.steps, "reward_sum": seen, "event_sum": from_events, "episodes_ended": episodes, "events": counts, "env_steps_per_s": n * a.steps / wall}))
    return 0 if abs(seen - from_events) < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
