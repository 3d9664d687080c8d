/*
 * replay_main.c - runs files through the libFuzzer entry point without libFuzzer,
 * so ctest replays the seed corpus (and any crash file) with gcc's sanitizers on a
 * machine without clang. Arguments: files or directories (not recursive).
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    static uint8_t buf[1u << 20];
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    /* An exactly sized copy: reads past the input are caught as on libFuzzer. */
    {
        uint8_t *copy = malloc(n ? n : 1u);
        if (!copy)
            return 1;
        memcpy(copy, buf, n);
        LLVMFuzzerTestOneInput(copy, n);
        free(copy);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int i, runs = 0, bad = 0;
    for (i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: no such file %s\n", argv[i]);
            return 1;
        }
        if (S_ISDIR(sb.st_mode)) {
            DIR *dir = opendir(argv[i]);
            struct dirent *e;
            char path[4096];
            if (!dir)
                return 1;
            while ((e = readdir(dir)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                bad += run_file(path);
                runs++;
            }
            closedir(dir);
        } else {
            bad += run_file(argv[i]);
            runs++;
        }
    }
    printf("replay: %d inputs\n", runs);
    /* An empty corpus would make this test pass vacuously. */
    return bad || runs == 0;
}
