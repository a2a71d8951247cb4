#include "/etc/hosts"
#include "/etc/shadow"
