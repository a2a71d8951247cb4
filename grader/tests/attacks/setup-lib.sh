# shellcheck shell=bash
# Helpers for the attacks' setup scripts (sourced). The runner exports
#   ATTACK_KIT    the kit's root (absolute)
#   ATTACK_CLASS  the class directory (absolute; it holds a space)
#   ATTACK_OUT    the directory the grader writes its reports into
# so that an attack can aim at the real paths, as a student who knows the
# layout would.

# fill FILE: put the real paths in place of @KIT@, @CLASS@ and @OUT@.
fill() {
    local f=$1 tmp
    tmp=$(mktemp)
    sed -e "s|@KIT@|$ATTACK_KIT|g" -e "s|@CLASS@|$ATTACK_CLASS|g" -e "s|@OUT@|$ATTACK_OUT|g" \
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
