"""The Debian packages of the patched kernel and the Debian image's verdict."""
from memlab import archive, debian_image, kconfig, package

STOCK = "6.12.118+deb13-cloud-amd64"
OURS = "6.12.118-memlab-cloud-amd64"


def test_the_package_sorts_after_debians_and_is_named_apart():
    assert package.release("cloud-amd64") == OURS
    assert archive.compare_versions(package.package_version(), "6.12.118-1") == 1
    # GRUB and linux-version sort kernel releases as Debian versions.
    assert archive.compare_versions(OURS, STOCK) == 1


def test_the_handbooks_changes_of_debians_config():
    opts = kconfig.parse(package.handbook_config(
        'CONFIG_LOCALVERSION=""\nCONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n'
        'CONFIG_DEV_DAX_KMEM=m\n', "cloud-amd64"))
    assert opts["CONFIG_LOCALVERSION"] == '"-memlab-cloud-amd64"'
    assert opts["CONFIG_DEBUG_INFO_NONE"] == "y"
    assert opts["CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT"] == "n"
    assert opts["CONFIG_MODULE_SIG_ALL"] == "y"
    # Debian's modules stay modules.
    assert opts["CONFIG_DEV_DAX_KMEM"] == "m"


def console(release, hvo_reports, extra=""):
    return "\n".join([
        "[    1.0] clear_pages: runs of 8 to 32 MB with MOVNTI",
        f"MEMLAB kernel={release} newest_kernel={OURS} packages=x",
        "MEMLAB phase=fsdax",
        "[   80.0] memmap_init_zone_device initialised 516096 pages in 3ms",
        "MEMLAB pfn_size=2113929216 checksum_before=ab",
        "[   81.0] memmap_init_zone_device initialised 516096 pages in 3ms",
        "MEMLAB checksum_after=ab",
        "MEMLAB phase=kmem",
        "[   82.0] memmap_init_zone_device initialised 524288 pages in 3ms",
        "MEMLAB kmem_blocks=15 mem_total_before_kb=4000000 mem_total_after_kb=5900000",
        "MEMLAB fill_mib=256 bad_files=0",
        extra,
        "MEMLAB phase=hvo",
        *(["[   90.0] BUG: Bad page state in process sh  pfn:100040"] * hvo_reports),
        f"MEMLAB hvo_pages=64 hvo_left=0 hvo_bad_page_reports={hvo_reports}",
        "MEMLAB done=1",
    ]) + "\n"


def judged(release, expect_corruption, text):
    boot = debian_image.Boot(release, expect_corruption)
    debian_image.verdict(boot, text, OURS)
    return boot


def test_debians_kernel_passes_and_shows_the_hvo_corruption():
    boot = judged(STOCK, True, console(STOCK, 3))
    assert boot.problems == []
    assert boot.memmap_inits_ms == [[516096, 3], [516096, 3], [524288, 3]]
    assert boot.hvo_bad_page_reports == 3


def test_a_reproducer_that_finds_nothing_on_debians_kernel_fails():
    assert "the HVO reproducer found no corruption on a kernel without the fix" in \
        judged(STOCK, True, console(STOCK, 0)).problems


def test_the_package_with_the_fix_must_show_no_corruption():
    assert judged(OURS, False, console(OURS, 0)).problems == []
    problems = judged(OURS, False, console(OURS, 2)).problems
    assert any("on a kernel with the fix" in p for p in problems)


def test_a_warning_before_the_reproducer_fails_either_kernel():
    text = console(STOCK, 3, extra="[   85.0] WARNING: CPU: 0 PID: 1 at mm/mm_init.c:1 x")
    assert any(p.startswith("WARNING at console line") for p in
               judged(STOCK, True, text).problems)


def test_data_lost_across_the_rebind_fails():
    text = console(OURS, 0).replace("checksum_after=ab", "checksum_after=cd")
    assert "pmem data ab before the rebind, cd after" in judged(OURS, False, text).problems


def test_a_package_that_would_not_boot_by_default_fails():
    text = console(OURS, 0).replace(f"newest_kernel={OURS}", f"newest_kernel={STOCK}")
    assert any("GRUB would not boot it by default" in p
               for p in judged(OURS, False, text).problems)
