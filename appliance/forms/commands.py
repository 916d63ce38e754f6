"""CLI: ``appliance demo`` (serve the demo forms and print their URLs)."""

from __future__ import annotations

import argparse
import asyncio

from appliance import config


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="operator YAML merged over configs/default.yaml")


def register(parsers) -> None:
    p = parsers.top.add_parser("demo", help="serve the bundled demo forms on 127.0.0.1 and print their URLs")
    _add_config(p)
    p.add_argument("--port", type=int, help="override forms.demo_port (0 = any free port)")
    p.set_defaults(func=_demo)


def _demo(args) -> int:
    from appliance.demo.site import DemoSite

    cfg = config.load(args.config)
    port = cfg.forms.demo_port if args.port is None else args.port

    async def serve() -> None:
        async with DemoSite(port=port) as site:
            for name, url in site.urls.items():
                print(f"{name}: {url}", flush=True)
            await asyncio.Event().wait()

    asyncio.run(serve())
    return 0
