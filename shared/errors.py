"""The product's exception hierarchy: every error we raise derives from ArchiverError."""


class ArchiverError(Exception):
    """Root of every error raised by this product."""


class ConfigError(ArchiverError):
    """A setting is missing or invalid."""


class StorageError(ArchiverError):
    """The object store (S3) could not be reached or refused an operation."""


class BusError(ArchiverError):
    """NATS JetStream could not be reached or refused an operation."""


class TargetRefused(ArchiverError):
    """A capture target is not allowed (private address, bad scheme, ...)."""


class NoSuchHost(TargetRefused):
    """A capture target's name does not exist (the DNS answered so): refused, as a target
    that cannot be reached; unlike TargetUnresolved, a retry would find the same."""


class TargetUnresolved(ArchiverError):
    """A capture target's name could not be resolved for now (DNS temporarily failed): retry
    later; unlike TargetRefused this says nothing about the target itself."""
