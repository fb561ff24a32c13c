// casefold.so, loaded into git with LD_PRELOAD by the tests, gives git a case-insensitive,
// case-preserving view of every path under "/refs/cairn-mirror/", as macOS and Windows do: a
// name is looked up as the entry already there that differs from it only in case.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static const char *fold(const char *path, char *buf) {
	static DIR *(*real_opendir)(const char *);
	const char *m = path ? strstr(path, "/refs/cairn-mirror/") : NULL;
	if (!m || strlen(path) >= 4096)
		return path;
	if (!real_opendir)
		real_opendir = dlsym(RTLD_NEXT, "opendir");
	strcpy(buf, path);
	char *p = buf + (m - path) + strlen("/refs/cairn-mirror/");
	while (*p) {
		char *end = strchr(p, '/');
		if (end)
			*end = 0;
		char saved = p[-1];
		p[-1] = 0;
		DIR *d = real_opendir(buf[0] ? buf : "/");
		p[-1] = saved;
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (strcasecmp(e->d_name, p) == 0 && strlen(e->d_name) == strlen(p)) {
					memcpy(p, e->d_name, strlen(p));
					break;
				}
			}
			closedir(d);
		}
		if (!end)
			break;
		*end = '/';
		p = end + 1;
	}
	return buf;
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = dlsym(RTLD_NEXT, #name)

int open64(const char *path, int flags, ...) {
	REAL(open64);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, int); va_end(ap); }
	char b[4096];
	return real(fold(path, b), flags, mode);
}
int open(const char *path, int flags, ...) {
	REAL(open);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, int); va_end(ap); }
	char b[4096];
	return real(fold(path, b), flags, mode);
}
int __open64_2(const char *path, int flags) { REAL(__open64_2); char b[4096]; return real(fold(path, b), flags); }
int __open_2(const char *path, int flags) { REAL(__open_2); char b[4096]; return real(fold(path, b), flags); }
int access(const char *path, int mode) { REAL(access); char b[4096]; return real(fold(path, b), mode); }
FILE *fopen64(const char *path, const char *mode) { REAL(fopen64); char b[4096]; return real(fold(path, b), mode); }
FILE *fopen(const char *path, const char *mode) { REAL(fopen); char b[4096]; return real(fold(path, b), mode); }
int lstat64(const char *path, struct stat64 *st) { REAL(lstat64); char b[4096]; return real(fold(path, b), st); }
int stat64(const char *path, struct stat64 *st) { REAL(stat64); char b[4096]; return real(fold(path, b), st); }
int lstat(const char *path, struct stat *st) { REAL(lstat); char b[4096]; return real(fold(path, b), st); }
int stat(const char *path, struct stat *st) { REAL(stat); char b[4096]; return real(fold(path, b), st); }
int mkdir(const char *path, mode_t mode) { REAL(mkdir); char b[4096]; return real(fold(path, b), mode); }
int rmdir(const char *path) { REAL(rmdir); char b[4096]; return real(fold(path, b)); }
int unlink(const char *path) { REAL(unlink); char b[4096]; return real(fold(path, b)); }
DIR *opendir(const char *path) { REAL(opendir); char b[4096]; return real(fold(path, b)); }
ssize_t readlink(const char *path, char *out, size_t n) { REAL(readlink); char b[4096]; return real(fold(path, b), out, n); }
int rename(const char *from, const char *to) { REAL(rename); char b1[4096], b2[4096]; return real(fold(from, b1), fold(to, b2)); }
