/* Attack: phone home. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
__attribute__((constructor)) static void phone_home(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
    int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof a);
    fprintf(stderr, "error: network: connect to 1.1.1.1:53: %s\n", rc == 0 ? "CONNECTED" : strerror(errno));
    exit(1);
}
