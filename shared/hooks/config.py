"""A plugin's settings: its config.json (JSON Schema) resolved against the environment."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from shared.errors import ConfigError
from shared.platforms import registry

PLATFORM_FRAGMENT = Path(registry.__file__).with_name("plugin.json")
"""The settings (and artifact kinds) every platform plugin has: a config.json saying
`"x-platform": true` gets them laid under its own (`{P}`: its prefix, `{p}`: its name)."""

PLATFORM_READS = "x-platform"
"""In a config.json's `"reads"`: every platform plugin (each platform of the registry is the
plugin of its name), so a reader of the platforms' kept files needs no list of them."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may run when neither `<PLUGIN>_TIMEOUT` nor `TIMEOUT` says otherwise."""


def env_prefix(plugin: str) -> str:
    """Env-var prefix of a plugin: `media-dl` -> `MEDIA_DL`."""
    return re.sub(r"[^A-Z0-9]+", "_", plugin.upper()).strip("_")


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _coerce(plugin: str, name: str, raw: str, spec: Mapping[str, Any]) -> Any:
    """Turn an env string into the JSON type the schema declares for it; a string that is
    none of them is a ConfigError naming the plugin, e.g. "fetch: FETCH_TIMEOUT='soon' is
    not a number"."""
    kind = spec.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "boolean" in kinds:
        low = raw.strip().lower()
        if low in _TRUE | _FALSE:
            return low in _TRUE
    if "integer" in kinds and raw.strip().lstrip("-").isdigit():
        return int(raw)
    if "number" in kinds:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(f"{plugin}: {name}={raw!r} is not a number") from None
    if "array" in kinds or "object" in kinds:
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ConfigError(f"{plugin}: {name}={raw!r} is not JSON ({e})") from None
    return raw


def _to_env(value: Any) -> str:
    """Back to an env string: booleans as true/false, lists and objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


MAX_CHECKED = 64
"""Validated value sets a plugin's config remembers."""


@dataclass(frozen=True)
class PluginConfig:
    """One plugin's config.json, ready to resolve against an environment."""

    plugin: str
    """Plugin folder name."""
    properties: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The schema's `properties`: setting name -> JSON Schema (default, description, ...)."""
    schema: Mapping[str, Any] = field(default_factory=dict)
    """The whole schema, for validation."""
    reads: tuple[str, ...] = ()
    """Plugins whose output this one reads (`"reads"` in config.json; see reads.py). The entry
    `"x-platform"` stands for every platform plugin (`PLATFORM_READS`)."""
    domains: tuple[str, ...] = ()
    """`"x-domains"`, or a platform plugin's link domains (`shared.platforms.registry`): the
    registrable domains of the links its hooks run for; empty: every link."""
    contacts_host: bool = False
    """`"x-contacts-host": true`: its hooks talk to the link's host (navigation, the raw
    fetch, a platform's API). The snapshot's host slot is released once every such hook of
    the job has ended (shared/capture/worker.py)."""
    domains_setting: str | None = None
    """A platform on any host (Mastodon): the setting listing the hosts it runs for."""
    _checked: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)
    """Values already validated against the schema (as JSON) -> the error they gave, None for
    none. A worker resolves every plugin for each job with the same settings: validating
    them again cost ~0.15 ms a plugin, ~18 ms of the archiver's CPU a page."""

    def runs_for(self, url: str, env: Mapping[str, str] | None = None) -> bool:
        """Whether its hooks run for a link: its registrable domain is one of `domains`, or
        its host one of those `domains_setting` lists (in `env`, else its default)."""
        host = (urlsplit(url).hostname or "").lower()
        if self.domains_setting is not None:
            listed = self.values(env or {}).get(self.domains_setting, "")
            return host in registry.link_domains(self.plugin, str(listed))
        if not self.domains:
            return True
        # imported here: a hook reading its settings never needs the link rules (tldextract
        # and requests are ~13 MB a hook host would otherwise hold: shared/hooks/host.py)
        from shared.links.domains import registrable_domain

        return registrable_domain(host) in self.domains

    @property
    def prefix(self) -> str:
        """Env-var prefix, e.g. FETCH."""
        return env_prefix(self.plugin)

    def _raw(self, env: Mapping[str, str], name: str) -> str | None:
        """The env string for a setting, following `x-fallback` (and TIMEOUT for *_TIMEOUT)."""
        if name in env:
            return env[name]
        spec = self.properties.get(name, {})
        fallback = spec.get("x-fallback") or (
            "TIMEOUT" if name == f"{self.prefix}_TIMEOUT" else None
        )
        if isinstance(fallback, str) and fallback in env:
            return env[fallback]
        return None

    def values(self, env: Mapping[str, str]) -> dict[str, Any]:
        """Every declared setting, typed: its env value (following `x-fallback`), else the
        default config.json declares. Not validated against the schema (`resolve` is)."""
        values: dict[str, Any] = {}
        for name, spec in self.properties.items():
            raw = self._raw(env, name)
            if raw is not None:
                values[name] = _coerce(self.plugin, name, raw, spec)
            elif "default" in spec:
                values[name] = spec["default"]
        return values

    def resolve(self, env: Mapping[str, str]) -> dict[str, Any]:
        """Every declared setting plus `<P>_TIMEOUT`/`<P>_ENABLED`, typed and schema-validated."""
        values = self.values(env)
        self._validate(values)
        timeout_key, enabled_key = f"{self.prefix}_TIMEOUT", f"{self.prefix}_ENABLED"
        if timeout_key not in values:
            raw = self._raw(env, timeout_key)
            values[timeout_key] = (
                _coerce(self.plugin, timeout_key, raw, {"type": "number"}) if raw else None
            )
        if values[timeout_key] is None:
            values[timeout_key] = DEFAULT_TIMEOUT
        if not isinstance(values[timeout_key], (int, float)) or values[timeout_key] <= 0:
            raise ConfigError(f"{timeout_key} must be a positive number of seconds")
        if enabled_key not in values:
            raw = self._raw(env, enabled_key)
            values[enabled_key] = (
                _coerce(self.plugin, enabled_key, raw, {"type": "boolean"}) if raw else True
            )
        return values

    def _validate(self, values: dict[str, Any]) -> None:
        """Raise ConfigError when the values break the schema (each distinct set checked once)."""
        key = json.dumps(values, sort_keys=True, default=repr)
        if key not in self._checked:
            if len(self._checked) >= MAX_CHECKED:
                self._checked.clear()
            try:
                jsonschema.Draft202012Validator(dict(self.schema)).validate(values)
                self._checked[key] = None
            except jsonschema.ValidationError as e:
                where = ".".join(str(p) for p in e.absolute_path) or "config"
                self._checked[key] = f"{self.plugin}: {where}: {e.message}"
        error = self._checked[key]
        if error is not None:
            raise ConfigError(error)

    def hook_env(self, env: Mapping[str, str]) -> tuple[dict[str, str], float]:
        """The hook's environment (`env` with this plugin's resolved settings laid over it)
        and its timeout in seconds, from one resolution."""
        values = self.resolve(env)
        merged = dict(env)
        merged.update({k: _to_env(v) for k, v in values.items()})
        return merged, float(values[f"{self.prefix}_TIMEOUT"])

    @property
    def artifacts(self) -> Mapping[str, str]:
        """`x-artifacts`: file pattern (fnmatch, on the path inside the plugin's folder) ->
        artifact kind, first match wins; e.g. {"headers.json": "headers", "body*": "raw"}."""
        declared = self.schema.get("x-artifacts", {})
        return declared if isinstance(declared, dict) else {}

    def artifact_kind(self, relpath: str) -> str:
        """The kind of one of the plugin's output files, as its config.json declares it;
        the runner's `*.stderr.log` is `log`, an undeclared file `<plugin>_file`."""
        for pattern, kind in self.artifacts.items():
            if fnmatch.fnmatchcase(relpath, pattern):
                return str(kind)
        if relpath.endswith(".stderr.log"):
            return "log"
        return f"{self.plugin}_file"

    def timeout(self, env: Mapping[str, str]) -> float:
        """`<PLUGIN>_TIMEOUT`, else `TIMEOUT`, else the config default, else 60 s."""
        return float(self.resolve(env)[f"{self.prefix}_TIMEOUT"])

    def enabled(self, env: Mapping[str, str]) -> bool:
        """`<PLUGIN>_ENABLED` (default true)."""
        return bool(self.resolve(env)[f"{self.prefix}_ENABLED"])


def _with_platform(plugin: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A platform plugin's schema: the shared fragment's settings and artifact kinds, its
    own laid over them (`x-platform`); any other schema as it is."""
    if schema.get("x-platform") is not True:
        return schema
    text = PLATFORM_FRAGMENT.read_text().replace("{P}", env_prefix(plugin))
    fragment = json.loads(text.replace("{p}", plugin))
    own = schema.get("properties", {})
    properties = {**fragment["properties"], **(own if isinstance(own, dict) else {})}
    artifacts = {**fragment["x-artifacts"], **schema.get("x-artifacts", {})}
    return {**schema, "properties": properties, "x-artifacts": artifacts}


def read_schema(path: Path) -> dict[str, Any]:
    """A plugin's config.json as its settings' schema (a platform plugin's with the shared
    fragment); not checked."""
    schema = json.loads(path.read_text())
    return _with_platform(path.parent.name, schema) if isinstance(schema, dict) else schema


@lru_cache(maxsize=256)
def _load(path: Path, mtime_ns: int) -> PluginConfig:
    plugin = path.parent.name
    try:
        schema = read_schema(path)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        raise ConfigError(f"{plugin}/config.json is not a valid JSON Schema: {e}") from e
    if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
        raise ConfigError(f"{plugin}/config.json must be an object schema with properties")
    artifacts = schema.get("x-artifacts", {})
    if not isinstance(artifacts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in artifacts.items()
    ):
        raise ConfigError(f"{plugin}/config.json: x-artifacts must map file patterns to kinds")
    reads = schema.get("reads", [])
    if not isinstance(reads, list) or not all(isinstance(r, str) and r for r in reads):
        raise ConfigError(f"{plugin}/config.json: reads must be a list of plugin names")
    if PLATFORM_READS in reads:  # every platform's plugin, the registry's list, not a copy
        at = reads.index(PLATFORM_READS)
        reads = [*reads[:at], *sorted(registry.SITES), *reads[at + 1 :]]
    domains = schema.get("x-domains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) and d for d in domains):
        raise ConfigError(f"{plugin}/config.json: x-domains must be a list of domains")
    contacts_host = schema.get("x-contacts-host", False)
    if not isinstance(contacts_host, bool):
        raise ConfigError(f"{plugin}/config.json: x-contacts-host must be true or false")
    setting = None
    if schema.get("x-platform") is True:
        if plugin not in registry.SITES:
            raise ConfigError(f"{plugin}/config.json: x-platform, but no platform {plugin!r}")
        setting = registry.SITES[plugin].instances
        domains = [*domains, *registry.link_domains(plugin)]
    return PluginConfig(
        plugin,
        schema.get("properties", {}),
        schema,
        tuple(reads),
        tuple(d.lower() for d in domains),
        contacts_host,
        setting,
    )


def setting_errors(dirs: Mapping[str, Path], env: Mapping[str, str]) -> list[str]:
    """Why each plugin (name -> folder) refuses its settings in `env`, one message a
    plugin: a worker says so when it starts, not only in every capture's results."""
    errors = []
    for _name, path in sorted(dirs.items()):
        try:
            load_plugin_config(path).resolve(env)
        except ConfigError as exc:
            errors.append(str(exc))
    return errors


def setting_names(plugin_folders: Iterable[Path]) -> set[str]:
    """Every environment variable these plugins read: each one's declared settings (a
    platform plugin's shared ones too), its `<P>_TIMEOUT` and `<P>_ENABLED`, and the names
    they fall back on (`x-fallback`, `TIMEOUT`)."""
    names = {"TIMEOUT"}
    for folder in plugin_folders:
        try:
            properties = load_plugin_config(folder).properties  # read once: setting_errors too
        except ConfigError:  # its error is the plugin's refused setting (setting_errors)
            continue
        prefix = env_prefix(folder.name)
        names |= {f"{prefix}_TIMEOUT", f"{prefix}_ENABLED", *properties}
        for spec in properties.values():
            if isinstance(spec, dict) and isinstance(spec.get("x-fallback"), str):
                names.add(spec["x-fallback"])
    return names


def load_plugin_config(plugin_dir: Path) -> PluginConfig:
    """Read `<plugin_dir>/config.json` (optional: absent means no declared settings)."""
    path = plugin_dir / "config.json"
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return PluginConfig(plugin_dir.name)
    return _load(path, mtime)


def hook_settings(hook_file: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A hook's settings, typed: the environment (where the runner lays every resolved
    setting) over the defaults its plugin's config.json declares, the one place a plugin's
    defaults live. `hook_file` is the hook's `__file__`. The schema is not checked again
    (the runner did; checking costs ~6 ms a hook)."""
    path = Path(hook_file).resolve().parent / "config.json"
    schema = read_schema(path)
    config = PluginConfig(path.parent.name, schema.get("properties", {}), schema)
    return config.values(os.environ if env is None else env)
