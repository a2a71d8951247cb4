# shellcheck shell=bash
# Sourced by the attack runners (run-attacks.sh, run-attacks-gradescope.sh):
# make one attack's submission as grader/tests/attacks/README.md describes.
#   attack_prepare ATTACK_DIR CLASS OUT WORK
# puts the submission in CLASS/<student> and its student name in
# $attack_student; needs ROOT (the kit) and a function `bad MESSAGE`. OUT is
# the directory the grader will write into (for the setup's @OUT@), WORK a
# scratch directory.
attack_prepare() {
    local a=$1 class=$2 out=$3 work=$4 name sol f err
    name=${a##*/}
    attack_student=$name
    [ -f "$a/student" ] && attack_student=$(cat "$a/student")
    mkdir -p "$class/$attack_student"
    [ -d "$a/files" ] && cp -r "$a/files/." "$class/$attack_student/"
    if [ -f "$a/files.patch" ]; then
        # A reference file with a small change: the files the patch names,
        # from the lab's reference, patched (outside any git repository).
        sol=$(ls -d "$ROOT"/solutions/lab"$(cut -d, -f1 "$a/lab")"_* 2>/dev/null | head -1)
        for f in $(sed -nE 's#^diff --git a/([^ ]+) b/.*#\1#p' "$a/files.patch"); do
            [ -f "$sol/$f" ] && cp "$sol/$f" "$class/$attack_student/$f"
        done
        if ! err=$(cd "$class/$attack_student" && GIT_CEILING_DIRECTORIES=$(dirname "$PWD") \
            git apply --whitespace=nowarn "$ROOT/$a/files.patch" 2>&1); then
            bad "attack $name: its files.patch no longer applies to ${sol#"$ROOT"/}/ (the reference changed): $err"
        fi
    fi
    rm -f "$work/renamed"
    if [ -x "$a/setup" ]; then
        ATTACK_SIDE_CLASS=${ATTACK_SIDE_CLASS:-} ATTACK_KIT=$ROOT ATTACK_AIM=${ATTACK_AIM:-$ROOT} ATTACK_GRADETMP=${ATTACK_GRADETMP:-/tmp} ATTACK_CLASS=$class ATTACK_OUT=$out ATTACK_RENAMED=$work/renamed \
            "$a/setup" "$class/$attack_student" "$class" || bad "attack $name: its setup failed"
    fi
    # Renamed by its setup (names git cannot hold): the new name is in the file.
    if [ -s "$work/renamed" ]; then
        attack_student=$(cat "$work/renamed"; echo .)
        attack_student=${attack_student%.}
    fi
}
