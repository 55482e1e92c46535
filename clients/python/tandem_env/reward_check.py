"""Steps N environments K steps with scripted scoops, seeded random joint targets or a replayed
action sequence, and prints, as one JSON line, the sum of the rewards the client saw and the sum
the server's task events imply. The implied sum is the task's rule applied to the events' kinds
alone, never to their reward fields: +1 for the first `in-correct-slot` of a part in an episode,
−1 for each `knocked-out`, 0 for the rest (other tasks: the events' own rewards).

    python3 -m tandem_env.reward_check ws://127.0.0.1:8765 --steps 10000 --seed 0 [--tier 1]
    python3 -m tandem_env.reward_check URL --steps 10000 --replay replay.json

A replay file is {"layout": {...}, "actions": [[14 floats] × T]}: every env resets to that
layout and steps the same actions, from the first row again after each autoreset
(code:sort-from-tote's actions on a hand-built layout put parts in their slots, so the sums are
not both 0; `npm run bench -- env-rewards` writes one).

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


class ImpliedReturn:
    """The task's reward rule on event kinds, per env, reset when its episode ends."""

    def __init__(self, n: int) -> None:
        self.credited: list[set] = [set() for _ in range(n)]

    def add(self, i: int, event: dict) -> float:
        kind = event.get("kind")
        if kind == "in-correct-slot":
            part = event.get("object")
            if part in self.credited[i]:
                return 0.0
            self.credited[i].add(part)
            return 1.0
        if kind == "knocked-out":
            return -1.0
        if kind in ("picked", "in-wrong-slot", "off-table"):
            return 0.0
        return float(event.get("reward", 0))

    def episode_ended(self, i: int) -> None:
        self.credited[i] = set()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tier", type=int)
    p.add_argument("--pattern", choices=["scoop", "random"], default="scoop", help="scoop: the left arm scoops parts out of the tote and drops them beside the sorter; random: random joint targets")
    p.add_argument("--replay", help="a JSON file {layout, actions}: every env resets to the layout and steps the actions")
    p.add_argument("--hold", type=int, default=25, help="steps each random target is held")
    p.add_argument("--episode-seconds", type=float)
    a = p.parse_args(argv)
    rng = random.Random(a.seed)
    with VectorEnv(a.url) as env:
        n, low, high = env.num_envs, env.metadata["action_low"], env.metadata["action_high"]
        options = {"episode_seconds": a.episode_seconds} if a.episode_seconds else None
        replay = None
        layout = None
        if a.replay:
            with open(a.replay, encoding="utf-8") as f:
                loaded = json.load(f)
            replay, layout = loaded["actions"], loaded["layout"]
        env.reset(seed=a.seed, tier=a.tier, layout=layout, options=options)
        rule = ImpliedReturn(n)
        # Each env's row of the replay: back to the first when its episode ends (an autoreset).
        rows = [0] * n
        positive = 0
        seen = 0.0
        from_events = 0.0
        episodes = 0
        counts: dict = {}
        actions = [[0.0] * len(low) for _ in range(n)]
        t0 = time.perf_counter()
        for k in range(a.steps):
            if replay is not None:
                actions = [replay[row % len(replay)] for row in rows]
                rows = [row + 1 for row in rows]
            elif a.pattern == "scoop":
                actions = [scoop(k, i) for i in range(n)]
            elif k % a.hold == 0:
                # Random targets in the middle 80 % of each joint's range, grippers open or closed.
                actions = [[lo + (hi - lo) * (0.1 + 0.8 * rng.random()) for lo, hi in zip(low, high)] for _ in range(n)]
            _, reward, terminated, truncated, info = env.step(actions)
            seen += sum(float(r) for r in reward)
            positive += sum(1 for r in reward if float(r) > 0)
            for i, env_events in enumerate(info["events"]):
                for e in env_events:
                    from_events += rule.add(i, e)
                    counts[e["kind"]] = counts.get(e["kind"], 0) + 1
            for i, f in enumerate(info["final"]):
                if f is not None:
                    episodes += 1
                    rule.episode_ended(i)
                    rows[i] = 0
        wall = time.perf_counter() - t0
    print(json.dumps({"envs": n, "steps": a.steps, "reward_sum": seen, "event_sum": from_events, "episodes_ended": episodes, "positive_rewards": positive, "events": counts, "wall_s": wall, "env_steps_per_s": n * a.steps / wall}))
    return 0 if abs(seen - from_events) < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
