# pytester runs a suite of its own inside this one (test_plugin.py).
pytest_plugins = ["pytester"]
