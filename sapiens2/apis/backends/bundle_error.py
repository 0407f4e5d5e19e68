"""The one error of reading a bundle, apart from the reader so that its checks (manifest, config data) need not
import it."""


class BundleError(ValueError):
    """A folder that is not a readable bundle (no or corrupt manifest, unknown schema version, missing file)."""
