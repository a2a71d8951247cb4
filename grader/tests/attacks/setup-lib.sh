# shellcheck shell=bash
# Helpers for the attacks' setup scripts (sourced). The runner exports
#   ATTACK_KIT    the kit's root (absolute)
#   ATTACK_CLASS  the class directory (absolute; it holds a space)
#   ATTACK_OUT    the directory the grader writes its reports into
# so that an attack can aim at the real paths, as a student who knows the
# layout would.

# fill FILE: put the real paths in place of @KIT@, @CLASS@ and @OUT@ (@KIT@:
# ATTACK_AIM when the runner sets it: the kit the grader runs from, where
# that is not the kit the attack's files come from), and @GRADETMP@: where
# run_autograder makes its copy of the kit (ATTACK_GRADETMP, else /tmp).
fill() {
    local f=$1 tmp
    tmp=$(mktemp)
    sed -e "s|@KIT@|${ATTACK_AIM:-$ATTACK_KIT}|g" -e "s|@GRADETMP@|${ATTACK_GRADETMP:-/tmp}|g" -e "s|@CLASS@|$ATTACK_CLASS|g" -e "s|@OUT@|$ATTACK_OUT|g" \
        "$f" >"$tmp" && cat "$tmp" >"$f"
    rm -f "$tmp"
}

# with_solution DIR LABDIR FILE: the attack's code, then the reference
# solution, so that everything but the attack itself is right.
with_solution() {
    local dir=$1 lab=$2 file=$3
    fill "$dir/$file"
    cat "$ATTACK_KIT/solutions/$lab/$file" >>"$dir/$file"
}

# with_skeleton DIR LABDIR FILE: the attack's code, then the lab's skeleton
# (labs/): a submission that did none of the work.
with_skeleton() {
    local dir=$1 lab=$2 file=$3
    fill "$dir/$file"
    cat "$ATTACK_KIT/labs/$lab/$file" >>"$dir/$file"
}

# with_resolver DIR FILE: resolve-libc.h first, so the attack can call a
# C library function it never names (the object's symbols then show nothing).
with_resolver() {
    local dir=$1 file=$2 tmp
    tmp=$(mktemp)
    cat "$(dirname "${BASH_SOURCE[0]}")/resolve-libc.h" "$dir/$file" >"$tmp" && cat "$tmp" >"$dir/$file"
    rm -f "$tmp"
}
