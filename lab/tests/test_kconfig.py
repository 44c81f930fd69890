"""Fragments merge into a .config; dropped options are reported by name."""
from memlab import kconfig, paths, switches


def test_parse_set_and_unset():
    opts = kconfig.parse("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\n# comment\n")
    assert opts == {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"x y"'}


def test_merge_replaces_existing_values():
    dot = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_KEEP=m\n"
    merged = kconfig.parse(kconfig.merge(dot, {"CONFIG_A": "n", "CONFIG_B": "y"}))
    assert merged == {"CONFIG_A": "n", "CONFIG_B": "y", "CONFIG_KEEP": "m"}


def test_verify_names_dropped_and_changed_options():
    requested = {"CONFIG_DEV_DAX": "y", "CONFIG_ZONE_DEVICE": "y", "CONFIG_SLUB_TINY": "n"}
    final = "CONFIG_ZONE_DEVICE=y\nCONFIG_SLUB_TINY=y\n"   # DEV_DAX silently gone
    bad = kconfig.verify(requested, final)
    assert [b.name for b in bad] == ["CONFIG_DEV_DAX", "CONFIG_SLUB_TINY"]
    assert str(bad[0]) == "CONFIG_DEV_DAX: wanted y, got not set"


def test_verify_accepts_unset_request_missing_from_config():
    assert kconfig.verify({"CONFIG_X": "n"}, "CONFIG_Y=y\n") == []


def test_lab_fragment_has_what_the_lab_needs():
    lab = kconfig.load_fragment("lab")
    for name in ("CONFIG_ZONE_DEVICE", "CONFIG_DEVICE_PRIVATE", "CONFIG_LIBNVDIMM",
                 "CONFIG_X86_PMEM_LEGACY", "CONFIG_NVDIMM_PFN", "CONFIG_NVDIMM_DAX",
                 "CONFIG_DEV_DAX", "CONFIG_DEV_DAX_PMEM", "CONFIG_TRANSPARENT_HUGEPAGE",
                 "CONFIG_FS_DAX", "CONFIG_MEMORY_HOTPLUG", "CONFIG_MEMORY_HOTREMOVE",
                 "CONFIG_SPARSEMEM_VMEMMAP", "CONFIG_HUGETLBFS", "CONFIG_DYNAMIC_DEBUG",
                 "CONFIG_KUNIT", "CONFIG_MODULES"):
        assert lab.get(name) == "y", name


def test_debug_fragment_includes_lab_and_adds_sanitizers():
    debug = kconfig.load_fragment("debug")
    assert debug["CONFIG_ZONE_DEVICE"] == "y"
    for name in ("CONFIG_KASAN", "CONFIG_DEBUG_VM", "CONFIG_PROVE_LOCKING",
                 "CONFIG_DEBUG_PAGE_REF"):
        assert debug[name] == "y", name
    assert debug["CONFIG_SLUB_TINY"] == "n"   # KASAN needs the full SLUB


def test_kunit_suites_only_in_the_patched_variant_and_run_on_demand():
    suites = ("CONFIG_MEMMAP_INIT_KUNIT_TEST", "CONFIG_CLEAR_PAGES_KUNIT_TEST")
    for config in ("lab", "debug"):
        patched = kconfig.load_fragment(config, variant="patched")
        base = kconfig.load_fragment(config, variant="base")
        for name in suites:
            assert patched[name] == "y", (config, name)
            assert name not in base, (config, name)   # base has no such symbol
        # Built in, but not run at every boot (memlab kunit asks for them).
        assert patched["CONFIG_KUNIT_DEFAULT_ENABLED"] == "n"
        assert base["CONFIG_KUNIT_DEFAULT_ENABLED"] == "n"


def test_unknown_fragment_is_a_clear_error():
    import pytest
    from memlab.runner import LabError
    with pytest.raises(LabError, match="unknown config 'nope'"):
        kconfig.load_fragment("nope")
    assert paths.CONFIGS.exists()


def test_arm64_kunit_kernel_carries_the_suites_and_page_ref_tracepoints():
    kunit = kconfig.load_fragment("kunit", "arm64")
    for name in ("CONFIG_KUNIT", "CONFIG_MEMMAP_INIT_KUNIT_TEST",
                 "CONFIG_CLEAR_PAGES_KUNIT_TEST", "CONFIG_ZONE_DEVICE",
                 "CONFIG_DEBUG_PAGE_REF", "CONFIG_SERIAL_AMBA_PL011_CONSOLE"):
        assert kunit.get(name) == "y", name
    assert "CONFIG_KASAN" not in kunit   # the tracepoint case needs the template path on


def test_sparc64_kunit_kernel_keeps_page_virtual_per_pfn_in_sections():
    kunit = kconfig.load_fragment("kunit", "sparc64")
    for name in ("CONFIG_KUNIT", "CONFIG_MEMMAP_INIT_KUNIT_TEST", "CONFIG_64BIT",
                 "CONFIG_SERIAL_SUNSU_CONSOLE"):
        assert kunit.get(name) == "y", name
    assert kunit.get("CONFIG_SPARSEMEM_VMEMMAP") == "n"   # section numbers in page->flags
    assert "CONFIG_SERIAL_AMBA_PL011" not in kunit        # arm64's console stays arm64's


def test_only_the_debian_fragment_starts_from_debian():
    assert kconfig.debian_flavour("debian") == "amd64_none_amd64"
    for config in ("lab", "defer", "vm", "debug"):
        assert kconfig.debian_flavour(config) is None, config


def test_modules_not_asked_for_are_left_out():
    debian = "CONFIG_A=m\nCONFIG_B=m\nCONFIG_C=y\n# CONFIG_D is not set\n"
    started = kconfig.parse(kconfig.modules_left_out(debian, {"CONFIG_B": "y"}))
    assert started == {"CONFIG_A": "n", "CONFIG_B": "m", "CONFIG_C": "y", "CONFIG_D": "n"}
    # The fragment's own value then replaces the module.
    merged = kconfig.parse(kconfig.merge(kconfig.modules_left_out(debian, {"CONFIG_B": "y"}),
                                         {"CONFIG_B": "y"}))
    assert merged["CONFIG_B"] == "y"


def test_prompted_symbols_leave_out_those_only_selected():
    text = ("config FOO\n\tbool \"x\"\n\tdefault y\n"
            "menuconfig BAR\n\ttristate\n\tprompt \"bar\" if EXPERT\n"
            "config SELECTED_ONLY\n\tbool\n\thelp\n\t  bool \"not a prompt\" in help\n"
            "if FOO\nconfig BAZ_2\n\tint \"n\"\nendif\n"
            "config HIDDEN\n\tdef_bool y\n# config NOT\n")
    assert kconfig.prompted_symbols(text) == {"CONFIG_FOO", "CONFIG_BAR", "CONFIG_BAZ_2"}


def test_debian_changes_allow_modules_and_new_options_only():
    debian = ("CONFIG_NUMA=y\nCONFIG_HWPOISON_INJECT=m\nCONFIG_MOD2=m\n"
              "# CONFIG_DEVICE_PRIVATE is not set\nCONFIG_MEMCG=y\n")
    final = ("CONFIG_NUMA=y\nCONFIG_MOD2=y\nCONFIG_DEVICE_PRIVATE=y\n"
             "CONFIG_MEMMAP_INIT_KUNIT_TEST=y\n")    # HWPOISON_INJECT left out, MEMCG lost
    kept = {"CONFIG_NUMA", "CONFIG_HWPOISON_INJECT", "CONFIG_MOD2", "CONFIG_DEVICE_PRIVATE",
            "CONFIG_MEMCG", "CONFIG_MEMMAP_INIT_KUNIT_TEST"}
    bad = kconfig.debian_changes(debian, final, kept)
    assert [(b.name, b.wanted, b.got) for b in bad] == [
        ("CONFIG_DEVICE_PRIVATE", "n", "y"), ("CONFIG_MEMCG", "y", "n")]


def test_debian_fragment_states_debian_values_and_keeps_mm_options():
    debian = kconfig.load_fragment("debian")
    for name in ("CONFIG_NUMA", "CONFIG_DEFERRED_STRUCT_PAGE_INIT",
                 "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", "CONFIG_MHP_MEMMAP_ON_MEMORY",
                 "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP", "CONFIG_MEMCG", "CONFIG_DEV_DAX_KMEM",
                 "CONFIG_VIRTIO_MEM", "CONFIG_9P_FS"):
        assert debian.get(name) == "y", name
    # What Debian does not build stays out (its scenarios do not run there).
    assert "CONFIG_DEVICE_PRIVATE" not in debian
    assert kconfig.load_fragment("debian", variant="patched")["CONFIG_KUNIT"] == "y"
    assert "CONFIG_KUNIT" not in kconfig.load_fragment("debian", variant="base")


def test_kept_symbols_are_mm_kconfig_and_the_listed_ones(tmp_path):
    (tmp_path / "mm").mkdir()
    (tmp_path / "mm" / "Kconfig").write_text("config ZONE_DEVICE\n\tbool \"z\"\n")
    (tmp_path / "mm" / "Kconfig.debug").write_text("config PAGE_POISONING\n\tbool \"p\"\n")
    kept = kconfig.kept_symbols(tmp_path)
    assert {"CONFIG_ZONE_DEVICE", "CONFIG_PAGE_POISONING", "CONFIG_NUMA"} <= kept


def test_debian_guests_skip_what_debian_does_not_build():
    from memlab import catalog, scenario
    for name in ("device-private", "hmm-tests"):
        assert "debian" not in catalog.get(name).runs_on(), name
    for name in ("boot-deferred", "kmem-online", "kmem-memmap-on-memory", "fsdax-dev",
                 "hugetlb-1g", "hugetlb-1g-hvo", "numa-pmem"):
        assert "debian" in catalog.get(name).runs_on(), name
    assert "debian" not in catalog.get("boot-memmap").runs_on()   # it defers


def test_upstream_warnings_keep_guests_off_where_they_would_fire():
    from memlab import catalog, scenario
    # The boot gigantic page's HVO warns under DEBUG_VM (6.12.117).
    assert catalog.get("hugetlb-1g-hvo").runs_on() == ("lab", "defer", "debian")
    # Hot-added memory's first free (6.12) and test_hmm's split device THPs
    # (7.2) warn under allocation tag checks: those guests boot those kernels
    # with the profiling off, only them.
    assert scenario.TAG_CHECKING.names() == ("debug",)
    assert scenario.PROFILING_OFF in catalog.get("kmem-online").spec("patched", "debug").append
    assert scenario.PROFILING_OFF not in catalog.get("kmem-online").spec("patched", "lab").append
    assert scenario.PROFILING_OFF not in catalog.get("hugetlb-1g").spec("patched", "debug").append
    assert [n for n, sc in catalog.SCENARIOS.items() if sc.tags_warn_on_base] == [
        "kmem-online", "kmem-memmap-on-memory", "hmm-tests", "virtio-mem", "fault-inject",
        "fast-paths", *(f"without-{sw.name}" for sw in switches.SWITCHES)]


def test_hvo_and_init_on_alloc_must_be_on_where_asked():
    from memlab.checks import check_gigantic
    from memlab.console import Console
    con = Console()
    con.results += [{"gigantic_pages": "1", "runtime_allocs": "0"}]
    con.results += [{"gigantic_first_nonzero": "-1"}] * 4
    assert check_gigantic(con, {"ROUNDS": "4"}) == []
    assert check_gigantic(con, {"ROUNDS": "4", "HVO": "1", "INIT_ON_ALLOC": "1"}) == [
        "HVO asked for, hugetlb_optimize_vmemmap is None",
        "init_on_alloc asked for, the kernel's heap alloc init is None"]
    con.results.append({"hvo": "1", "heap_alloc_init": "on"})
    assert check_gigantic(con, {"ROUNDS": "4", "HVO": "1", "INIT_ON_ALLOC": "1"}) == []


def test_runtime_gigantic_pages_must_show_hvo_free_and_restore_their_vmemmap():
    from memlab.checks import GIGANTIC_HVO_PAGES, check_gigantic
    from memlab.console import Console
    assert GIGANTIC_HVO_PAGES == 4095
    con = Console()
    con.results += [{"gigantic_pages": "1", "hvo": "1"}]
    con.results += [{"gigantic_first_nonzero": "-1"}] * 4
    for _ in range(2):
        con.results += [{"gigantic_first_nonzero": "-1"},
                        {"runtime_alloc_memmap_delta": "-4095",
                         "runtime_free_memmap_delta": "4095"}]
    con.results.append({"runtime_allocs": "2", "boot_page_free_memmap_delta": "4095"})
    env = {"ROUNDS": "4", "RUNTIME_ALLOCS": "2"}
    assert check_gigantic(con, env | {"HVO": "1"}) == []
    # The same counts without HVO asked for: something freed vmemmap.
    assert check_gigantic(con, env) == [
        f"run-time page {i}: the count of memmap pages moved by -4095 when it was "
        "allocated and by 4095 when it was freed, expected 0 and 0" for i in (0, 1)] + [
        "freeing the boot page moved the count of memmap pages by 4095, expected 0"]
    assert check_gigantic(con, env | {"HVO": "1", "RUNTIME_ALLOCS": "3"}) == [
        "2 of 3 pages allocated at run time",
        "expected 4 rounds and 3 pages allocated at run time, saw 6 pages zeroed"]
    con.results[-2]["runtime_alloc_memmap_delta"] = "0"   # HVO left the new page alone
    assert check_gigantic(con, env | {"HVO": "1"}) == [
        "run-time page 1: the count of memmap pages moved by 0 when it was allocated "
        "and by 4095 when it was freed, expected -4095 and 4095"]


def test_prompted_symbols_in_a_choice_and_with_a_comment():
    text = ("choice\n\tprompt \"model\"\nconfig PREEMPT_NONE # the default\n\tbool \"none\"\n"
            "config PREEMPT_FULL\n\tbool 'full'\nendchoice\nconfig AFTER\n\tbool\n")
    assert kconfig.prompted_symbols(text) == {"CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_FULL"}


def _fake_tree(tmp_path):
    tree = tmp_path / "tree"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm" / "Kconfig").write_text("config ZONE_DEVICE\n\tbool \"z\"\n")
    (tree / "mm" / "Kconfig.debug").write_text("")
    return tree


def test_configure_starts_from_debian_and_keeps_its_options(tmp_path, monkeypatch):
    import pytest
    from memlab import build
    from memlab.runner import LabError
    tree, out = _fake_tree(tmp_path), tmp_path / "out"
    debian = "CONFIG_NUMA=y\nCONFIG_ZONE_DEVICE=y\nCONFIG_SOME_DRIVER=m\nCONFIG_9P_FS=m\n"
    monkeypatch.setattr(build, "debian_dotconfig", lambda flavour, arch: debian)
    monkeypatch.setattr(kconfig, "load_fragment",
                        lambda *a, **k: {"CONFIG_9P_FS": "y", "CONFIG_NUMA": "y"})
    monkeypatch.setattr(kconfig, "debian_flavour", lambda name: "amd64_none_amd64")
    made: list[str] = []
    # olddefconfig as a no-op, or one that drops ZONE_DEVICE (a kept option).
    drop: list[bool] = [False]

    def fake_make(cmd, log, what, **kw):
        made.append(cmd[-1])
        if drop[0]:
            dot = out / ".config"
            dot.write_text(dot.read_text().replace("CONFIG_ZONE_DEVICE=y",
                                                   "# CONFIG_ZONE_DEVICE is not set"))
        return 0
    monkeypatch.setattr(build, "run_logged", fake_make)
    build.configure(tree, out, "x86_64", "patched", "debian", tmp_path / "log")
    assert made == ["olddefconfig"]       # no tinyconfig
    final = kconfig.parse((out / ".config").read_text())
    assert final["CONFIG_SOME_DRIVER"] == "n" and final["CONFIG_9P_FS"] == "y"
    assert (out / ".memlab-config").exists()
    # A warm run checks the kept options again, and reconfigures.
    (out / ".config").write_text((out / ".config").read_text().replace(
        "CONFIG_ZONE_DEVICE=y", "# CONFIG_ZONE_DEVICE is not set"))
    drop[0] = True
    with pytest.raises(LabError, match="CONFIG_ZONE_DEVICE: wanted y, got not set"):
        build.configure(tree, out, "x86_64", "patched", "debian", tmp_path / "log")
    assert made == ["olddefconfig", "olddefconfig"]
    assert not (out / ".memlab-config").exists()


def test_a_debian_flavour_builds_only_for_its_architecture():
    import pytest
    from memlab import build
    from memlab.runner import LabError
    with pytest.raises(LabError, match="amd64_none_amd64 config is not for arm64"):
        build.debian_dotconfig("amd64_none_amd64", "arm64")


def test_another_base_qualifies_a_variant_from_its_own_directory(monkeypatch):
    """configs/7.2/patched.config: the 7.2 series has no clear_pages()
    suite, so none of its patched kernels (lab, debug, debian) asks for
    one; the default base's do."""
    for name in ("lab", "debug", "debian"):
        monkeypatch.setattr(kconfig.paths, "BASE", "")
        assert kconfig.load_fragment(name, variant="patched")["CONFIG_CLEAR_PAGES_KUNIT_TEST"] == "y"
        monkeypatch.setattr(kconfig.paths, "BASE", "7.2")
        opts = kconfig.load_fragment(name, variant="patched")
        assert opts["CONFIG_CLEAR_PAGES_KUNIT_TEST"] == "n", name
        assert opts["CONFIG_MEMMAP_INIT_KUNIT_TEST"] == "y", name
        assert "CONFIG_CLEAR_PAGES_KUNIT_TEST" not in kconfig.load_fragment(name, variant="base")
