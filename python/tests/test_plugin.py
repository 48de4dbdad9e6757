"""The plugin as another suite meets it: run by pytester in a process of its own."""

from apistend import Server


def test_a_suite_can_use_a_server_already_running(pytester, apistend, apistend_server,
                                                  monkeypatch):
    monkeypatch.setenv("APISTEND_URL", apistend_server.url)
    monkeypatch.setenv("APISTEND_ADMIN_TOKEN", apistend_server.admin_token)
    monkeypatch.setenv("APISTEND_CA", apistend.ca_file)
    pytester.makepyfile(
        """
        import os

        def test_inner(apistend_server, apistend_sandbox, apistend_proxy_env):
            assert apistend_server is None
            assert apistend_sandbox.base_url("wb") == os.environ["APISTEND_URL"] + "/wb"
            assert os.environ["HTTPS_PROXY"] == os.environ["APISTEND_URL"]
            assert os.environ["SSL_CERT_FILE"] == os.environ["APISTEND_CA"]
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    # The inner test's sandbox was deleted after it.
    assert not [s for s in apistend.sandboxes() if s["name"].endswith("::test_inner")]


def test_a_bad_argument_fails_the_start_with_the_servers_words(pytester):
    pytester.makepyfile("def test_inner(apistend_sandbox):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "--apistend-args=--only nosuchservice")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*apistend serve exited*", "*nosuchservice*"])


def test_the_server_without_pytest():
    with Server(["--only", "ozon"]) as server:
        sandbox = server.client.create_sandbox("plain")
        assert sandbox.base_url("ozon") == server.url + "/ozon"
        assert server.client.healthy()
        data_dir = server.data_dir
    assert not data_dir.exists()
