"""This package and the TypeScript SDK next to it agree on value sets, codes and retry constants.

Both write the service's contract out by hand (each stands alone); the TypeScript SDK's own
suite checks it against the service, this one checks this package against it.
"""

from __future__ import annotations

import os
import re
import tomllib
import unittest

from support import REPO_ROOT

import cos_sdk
from cos_sdk import DEFAULT_RETRY_POLICY

TS_SDK = os.path.join(REPO_ROOT, "sdk", "src")


def read(*parts: str) -> str:
    with open(os.path.join(*parts), encoding="utf-8") as file:
        return file.read()


@unittest.skipUnless(os.path.isdir(TS_SDK), "the TypeScript SDK is not next to this package")
class TypeScriptSdkTest(unittest.TestCase):
    def test_value_sets(self) -> None:
        source = read(TS_SDK, "types.ts")
        for name in (
            "FRAMINGS",
            "COMMUNICATION_STYLES",
            "COMPLEXITY_HANDLING",
            "ENCOURAGEMENT_LEVELS",
            "TASK_COMPLEXITIES",
            "PROFILE_PHASES",
            "VERSION_CAUSES",
        ):
            with self.subTest(name=name):
                match = re.search(rf"export const {name} = \[([^\]]*)\] as const", source)
                assert match is not None, f"{name} not found in types.ts"
                self.assertEqual(tuple(re.findall(r"'([^']*)'", match.group(1))), getattr(cos_sdk, name))

    def test_webhook_value_sets_and_tolerance(self) -> None:
        source = read(TS_SDK, "webhook-event.ts")
        for name in ("WEBHOOK_EVENT_TYPES", "WEBHOOK_ENVIRONMENTS"):
            with self.subTest(name=name):
                match = re.search(rf"export const {name} = \[([^\]]*)\] as const", source)
                assert match is not None, f"{name} not found in webhook-event.ts"
                self.assertEqual(tuple(re.findall(r"'([^']*)'", match.group(1))), getattr(cos_sdk, name))
        match = re.search(r"export const DEFAULT_WEBHOOK_TOLERANCE = (\d+);", read(TS_SDK, "webhook-verify.ts"))
        assert match is not None
        self.assertEqual(float(match.group(1)), cos_sdk.DEFAULT_WEBHOOK_TOLERANCE)

    def test_error_codes(self) -> None:
        match = re.search(r"export const ERROR_CODES = \{([^}]*)\}", read(TS_SDK, "errors.ts"))
        assert match is not None
        typescript = {code: int(status) for code, status in re.findall(r"([A-Z_]+): (\d+)", match.group(1))}
        self.assertTrue(typescript)
        # Every code the TypeScript SDK knows, with its status; this one knows the idempotency codes too.
        self.assertEqual({code: cos_sdk.ERROR_CODES[code] for code in typescript if code in cos_sdk.ERROR_CODES}, typescript)

    def test_retry_constants(self) -> None:
        match = re.search(r"DEFAULT_RETRY_POLICY: RetryPolicy = \{([^}]*)\}", read(TS_SDK, "retry.ts"))
        assert match is not None
        values = {name: float(value.replace("_", "")) for name, value in re.findall(r"(\w+): ([\d_]+)", match.group(1))}
        self.assertEqual(
            values,
            {
                "maxRetries": DEFAULT_RETRY_POLICY.max_retries,
                "baseDelay": DEFAULT_RETRY_POLICY.base_delay * 1000,
                "maxDelay": DEFAULT_RETRY_POLICY.max_delay * 1000,
                "maxRetryAfter": DEFAULT_RETRY_POLICY.max_retry_after * 1000,
                "budget": DEFAULT_RETRY_POLICY.budget * 1000,
            },
        )


class PackageTest(unittest.TestCase):
    def test_version_in_user_agent_is_the_one_in_pyproject(self) -> None:
        with open(os.path.join(REPO_ROOT, "sdk-python", "pyproject.toml"), "rb") as file:
            self.assertEqual(tomllib.load(file)["project"]["version"], cos_sdk.__version__)

    def test_ships_its_type_information(self) -> None:
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(cos_sdk.__file__), "py.typed")))


if __name__ == "__main__":
    unittest.main()
