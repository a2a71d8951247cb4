#!/usr/bin/env python3
"""Write a corpus of hand-in tarballs into DIR for the unpacker's test: one
good hand-in (the files of LAB_DIR, lab 1's reference: bootstrap.c and
answers.md) and hostile ones, and print one line per tarball: its name, then
the text its rejection must contain ("-" for the good one).
usage: hostile-tarballs.py DIR LAB_DIR"""
import gzip, io, os, sys, tarfile

out, lab_dir = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
good = open(os.path.join(lab_dir, "bootstrap.c"), "rb").read()
answers = open(os.path.join(lab_dir, "answers.md"), "rb").read()
expect = []


def member(name, data=b"", kind=tarfile.REGTYPE, **kw):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    ti.mode = 0o644
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, (data if kind == tarfile.REGTYPE else None)


def write(fname, members, reason, fmt=tarfile.USTAR_FORMAT, raw=None):
    path = os.path.join(out, fname)
    if raw is not None:
        open(path, "wb").write(raw)
    else:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
            for ti, data in members:
                t.addfile(ti, io.BytesIO(data) if data is not None else None)
        open(path, "wb").write(gzip.compress(buf.getvalue()))
    expect.append((fname, reason))


def tar_bytes(members, fmt=tarfile.USTAR_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for ti, data in members:
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


ok = member("lab1_bootstrap/bootstrap.c", good)
write("handin-alice-lab1.tar.gz", [ok, member("lab1_bootstrap/answers.md", answers)], "-")
write("handin-sym-lab1.tar.gz", [member("lab1_bootstrap/bootstrap.c", kind=tarfile.SYMTYPE, linkname="/etc/passwd")], "symbolic link")
write("handin-hard-lab1.tar.gz", [ok, member("lab1_bootstrap/x.c", kind=tarfile.LNKTYPE, linkname="lab1_bootstrap/bootstrap.c")], "hard link")
write("handin-fifo-lab1.tar.gz", [member("lab1_bootstrap/bootstrap.c", kind=tarfile.FIFOTYPE)], "FIFO")
write("handin-chr-lab1.tar.gz", [member("lab1_bootstrap/null", kind=tarfile.CHRTYPE, devmajor=1, devminor=3)], "character device")
write("handin-blk-lab1.tar.gz", [member("lab1_bootstrap/sda", kind=tarfile.BLKTYPE, devmajor=8, devminor=0)], "block device")
write("handin-abs-lab1.tar.gz", [member("/tmp/ncclab-escape-abs/bootstrap.c", good)], "absolute path")
write("handin-dotdot-lab1.tar.gz", [member("lab1_bootstrap/../../ncclab-escape-dotdot.c", good)], "'..'")
write("handin-hidden-lab1.tar.gz", [member("lab1_bootstrap/.bashrc", good)], "starting with '.'")
write("handin-outside-lab1.tar.gz", [member("bootstrap.c", good)], "outside a lab1_* folder")
write("handin-otherlab-lab1.tar.gz", [member("lab7_sweep/sweep.c", good)], "outside a lab1_* folder")
write("handin-twodirs-lab1.tar.gz", [ok, member("lab1_other/x.c", good)], "two folders")
write("handin-chars-lab1.tar.gz", [member("lab1_bootstrap/boot strap;rm.c", good)], "character other than")
write("handin-dup-lab1.tar.gz", [ok, ok], "appears twice")
write("handin-big-lab1.tar.gz", [member("lab1_bootstrap/bootstrap.c", b"\0" * (3 << 20))], "cap for one file")
write("handin-total-lab1.tar.gz", [member("lab1_bootstrap/f%d.c" % i, b"\0" * (1900 << 10)) for i in range(5)], "in all")
write("handin-many-lab1.tar.gz", [member("lab1_bootstrap/f%03d.c" % i, b"x") for i in range(40)], "entries")
write("handin-pax-lab1.tar.gz", [member("lab1_bootstrap/" + "p" * 120 + ".c", good)], "pax", fmt=tarfile.PAX_FORMAT)
write("handin-gnulong-lab1.tar.gz", [member("lab1_bootstrap/" + "g" * 120 + ".c", good)], "long-name", fmt=tarfile.GNU_FORMAT)
write("handin-empty-lab1.tar.gz", [], "no files")
write("handin-dirfile-lab1.tar.gz", [member("lab1_bootstrap/x", good), member("lab1_bootstrap/x/y.c", good)], "same name")
data = tar_bytes([ok])
write("handin-truncated-lab1.tar.gz", None, "truncated", raw=gzip.compress(data[:700]))
write("handin-trailing-lab1.tar.gz", None, "after the archive", raw=gzip.compress(data + b"garbage" + b"\0" * 505))
write("handin-notgzip-lab1.tar.gz", None, "not gzip data", raw=data)
bad_sum = bytearray(data)
bad_sum[0] ^= 0x20
write("handin-checksum-lab1.tar.gz", None, "checksum", raw=gzip.compress(bytes(bad_sum)))
write("handin-corruptgz-lab1.tar.gz", None, "corrupt", raw=gzip.compress(data)[:-12] + b"\xff" * 12)
# names the unpacker must not take as a student
write("handin-../x-lab1.tar.gz".replace("/", "_"), [ok], "skipped")
write("handin-.hidden-lab1.tar.gz", [ok], "skipped")
write("notes.txt", None, "skipped", raw=b"hello")
os.symlink(os.path.join(out, "handin-alice-lab1.tar.gz"), os.path.join(out, "handin-link-lab1.tar.gz"))
expect.append(("handin-link-lab1.tar.gz", "not a plain file"))
for name, reason in expect:
    if reason is not None:
        print(name + "\t" + reason)
