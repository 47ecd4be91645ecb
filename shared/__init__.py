"""The product's shared package: contracts, settings and clients used by every service."""
