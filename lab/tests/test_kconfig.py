"""Fragments merge into a .config; dropped options are reported by name."""
from memlab import kconfig, paths


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
