/* A plain echo child for the referee benchmark: every frame read is written back unchanged. */
#include <stdint.h>
#include <stdlib.h>
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

int main(void) {
    static unsigned char buffer[1 << 21];
    while (read_exactly(buffer, 4)) {
        uint32_t length = ((uint32_t)buffer[0] << 24) | ((uint32_t)buffer[1] << 16) |
                          ((uint32_t)buffer[2] << 8) | buffer[3];
        if (length > sizeof buffer - 4 || !read_exactly(buffer + 4, length)) return 1;
        size_t done = 0, size = length + 4;
        while (done < size) {
            ssize_t wrote = write(1, buffer + done, size - done);
            if (wrote <= 0) return 1;
            done += (size_t)wrote;
        }
    }
    return 0;
}
