/* The physical floor's child for the referee benchmark: for every frame read, it writes back one
   small action frame given on its command line in hex (what a real bot's answer costs to send),
   over plain pipes, with no sandbox and no decoding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_exactly(unsigned char *buffer, size_t size) {
    size_t done = 0;
    while (done < size) {
        ssize_t got = read(0, buffer + done, size - done);
        if (got <= 0) return 0;
        done += (size_t)got;
    }
    return 1;
}

int main(int argc, char **argv) {
    static unsigned char buffer[1 << 21], answer[4096];
    size_t size = argc > 1 ? strlen(argv[1]) / 2 : 0;
    if (size == 0 || size > sizeof answer) return 2;
    for (size_t i = 0; i < size; i++) {
        char hex[3] = {argv[1][2 * i], argv[1][2 * i + 1], 0};
        answer[i] = (unsigned char)strtoul(hex, NULL, 16);
    }
    while (read_exactly(buffer, 4)) {
        uint32_t length = ((uint32_t)buffer[0] << 24) | ((uint32_t)buffer[1] << 16) |
                          ((uint32_t)buffer[2] << 8) | buffer[3];
        if (length > sizeof buffer - 4 || !read_exactly(buffer + 4, length)) return 1;
        if (write(1, answer, size) != (ssize_t)size) return 1;
    }
    return 0;
}
