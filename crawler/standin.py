"""The Crawler's stand-in for the course's Unity binary: `Crawler_Linux/Crawler.x86_64` runs
`python -m crawler.standin` (through envkit/unity/standin.sh), which serves the built-in Crawler, 12
crawlers as the course's build has, to the genuine unityagents 0.4 client."""

from __future__ import annotations

import sys

from crawler.environment import CrawlerEnvironment
from envkit.unity.standin import Scene, main

SCENE = Scene("Crawler", CrawlerEnvironment, 12)

if __name__ == "__main__":
    sys.exit(main(SCENE))
