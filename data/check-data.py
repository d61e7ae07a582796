#!/usr/bin/env python3
# check-data.py — validates Paddock's data files beyond what generic tools check
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
#   check-data.py interfaces XML…   every interface, method, signal and
#                                    property has a doc comment above it
#   check-data.py services FILE…    the D-Bus activation file and the systemd
#                                    unit name the daemon consistently
#   check-data.py screenshots METAINFO
#                                    every screenshot the metainfo names is a
#                                    PNG in data/screenshots/ of the stated size
#   check-data.py urls METAINFO      no URL of the metainfo is on a name that
#                                    cannot exist (RFC 2606, RFC 6761)
#   check-data.py documentation UNIT PAGE…
#                                    every man:NAME(SECTION) of the unit's
#                                    Documentation= is one of the built PAGEs

import configparser
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

BUS_NAME = "org.paddock.Daemon"
failures = []


def fail(msg):
    failures.append(msg)


def check_interfaces(paths):
    for path in paths:
        parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
        root = ET.parse(path, parser=parser).getroot()
        members = 0

        def walk(parent):
            nonlocal members
            previous = None
            for child in parent:
                if child.tag in ("interface", "method", "signal", "property"):
                    members += 1
                    name = child.get("name")
                    if previous is None or previous.tag is not ET.Comment or \
                       len(previous.text.strip()) < 10:
                        fail(f"{path}: {child.tag} {name} has no doc comment above it")
                    elif child.tag != "interface" and name + ":" not in previous.text:
                        fail(f"{path}: the comment above {child.tag} {name} does not start with '{name}:'")
                    if child.tag == "interface":
                        if not name.startswith("org.paddock."):
                            fail(f"{path}: interface {name} is outside org.paddock.")
                        walk(child)
                previous = child

        walk(root)
        if members == 0:
            fail(f"{path}: no interface found")
        print(f"ok {path}: {members} documented members")


def check_services(paths):
    for path in paths:
        config = configparser.ConfigParser(interpolation=None, strict=True)
        config.optionxform = str
        with open(path) as f:
            config.read_file(f)
        if config.has_section("D-BUS Service"):
            section = config["D-BUS Service"]
            if section.get("Name") != BUS_NAME:
                fail(f"{path}: Name is not {BUS_NAME}")
            if not section.get("Exec", "").startswith("/") or \
               not section.get("Exec", "").endswith("/paddockd"):
                fail(f"{path}: Exec must be the absolute path of paddockd")
            if section.get("SystemdService") != "paddockd.service":
                fail(f"{path}: SystemdService must be paddockd.service")
        elif config.has_section("Service"):
            section = config["Service"]
            if section.get("Type") != "dbus" or section.get("BusName") != BUS_NAME:
                fail(f"{path}: must be Type=dbus with BusName={BUS_NAME}")
            if not section.get("ExecStart", "").endswith("/paddockd"):
                fail(f"{path}: ExecStart must run paddockd")
            if section.get("Delegate") != "yes":
                fail(f"{path}: sessions need a delegated cgroup subtree (Delegate=yes)")
        else:
            fail(f"{path}: neither a D-Bus service file nor a systemd unit")
        print(f"ok {path}")


def check_screenshots(paths):
    for path in paths:
        folder = os.path.join(os.path.dirname(os.path.abspath(path)), "screenshots")
        images = ET.parse(path).getroot().findall("./screenshots/screenshot/image")
        if not images:
            # None is allowed (none is hosted yet); the URLs are checked by "urls".
            print(f"ok {path}: no screenshots listed")
        for image in images:
            name = os.path.basename(image.text.strip())
            local = os.path.join(folder, name)
            if not os.path.isfile(local):
                fail(f"{path}: {name} is not in {folder}")
                continue
            with open(local, "rb") as f:
                header = f.read(24)
            if header[:8] != b"\x89PNG\r\n\x1a\n":
                fail(f"{local}: not a PNG")
                continue
            width, height = struct.unpack(">II", header[16:24])
            if (str(width), str(height)) != (image.get("width"), image.get("height")):
                fail(f"{local}: {width}x{height}, the metainfo says {image.get('width')}x{image.get('height')}")
            print(f"ok {name} {width}x{height}")


# Names reserved so that they never resolve: a store or a validator would
# fetch them and fail, as `appstreamcli validate` without --no-net did.
RESERVED_TLDS = ("invalid", "example", "test", "localhost")
RESERVED_DOMAINS = ("example.com", "example.net", "example.org")


def check_urls(paths):
    for path in paths:
        root = ET.parse(path).getroot()
        urls = [e.text.strip() for e in root.iter() if e.tag in ("url", "image") and e.text]
        for url in urls:
            match = re.match(r"^https?://([^/:]+)", url)
            if not match:
                fail(f"{path}: {url} is not an http(s) URL")
                continue
            host = match.group(1).lower().rstrip(".")
            if host.rsplit(".", 1)[-1] in RESERVED_TLDS or \
               any(host == d or host.endswith("." + d) for d in RESERVED_DOMAINS):
                fail(f"{path}: {url} names {host}, which cannot exist")
        print(f"ok {path}: {len(urls)} URL(s)")


def check_documentation(paths):
    unit, pages = paths[0], {os.path.basename(p) for p in paths[1:]}
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(unit)
    refs = parser.get("Unit", "Documentation", fallback="").split()
    if not refs:
        fail(f"{unit}: no Documentation=")
    for ref in refs:
        match = re.fullmatch(r"man:([^()]+)\((\w+)\)", ref)
        if not match:
            continue
        page = f"{match.group(1)}.{match.group(2)}"
        if page not in pages:
            fail(f"{unit}: Documentation={ref}, but the build makes no {page} (it makes {', '.join(sorted(pages))})")
        else:
            print(f"ok {unit}: {ref}")


if __name__ == "__main__":
    modes = {"interfaces": check_interfaces, "services": check_services, "screenshots": check_screenshots,
             "urls": check_urls, "documentation": check_documentation}
    if len(sys.argv) < 3 or sys.argv[1] not in modes:
        print(__doc__ or "usage: check-data.py interfaces|services|screenshots|urls|documentation FILE…", file=sys.stderr)
        sys.exit(2)
    modes[sys.argv[1]](sys.argv[2:])
    for message in failures:
        print("FAIL", message)
    sys.exit(1 if failures else 0)
