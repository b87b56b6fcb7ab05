"""Root conftest: the pytester fixture for plugin tests (pytest_plugins must live in the root conftest)."""

pytest_plugins = ("pytester",)
