/*
 * The floor client: sysbench's oltp_point_select reduced to the socket calls, with nothing else
 * per statement. Each thread opens one connection with the vendor's library (libmariadb, libpq:
 * the handshake and the prepares), then drives its socket by hand: the execute request built
 * once per table and patched with the id (drawn as sysbench draws it), one send(2), and a
 * blocking recv(2) that waits for the reply and reads it (a second recv only when the reply is
 * not complete). That is the least any client that sends a statement and waits for its reply
 * does, so the CPU it takes per statement is the floor oltplab and sysbench are measured
 * against (bench/vs_sysbench.py --floor; docs/performance-engine.md, "The floor client").
 *
 * It takes sysbench's options for the connection and the load, prints "Threads started!" once
 * every thread is connected and prepared, "SQL statistics:" when the load ends, and then one
 * line of JSON: {"transactions": N, "seconds": S}. One transaction is one point select.
 *
 *   cc -O2 -o floor_client floor_client.c $(mariadb_config --cflags --libs) -I$(pg_config
 *      --includedir) -lpq -lpthread
 *   floor_client --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306 --mysql-user=U
 *      --mysql-password=P --mysql-db=D --tables=4 --table-size=10000 --threads=8 --time=10
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <mysql.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TABLES 64
#define REPLY_BYTES 16384

struct options {
  int mysql; /* else PostgreSQL */
  const char *host, *port, *socket, *user, *password, *db;
  int tables, table_size, threads;
  double time_s;
};

static struct options opt = {.tables = 1, .table_size = 10000, .threads = 1, .time_s = 10};
static pthread_barrier_t connected, begin;
static atomic_int stop;
/* FLOOR_CALLS=library: the calls the vendor's library makes per statement instead (the socket
 * stays non-blocking; libmariadb reads first and polls when that finds nothing, libpq polls
 * first), so that what those calls cost sysbench can be measured the same way. */
static int library_calls;
static atomic_llong statements;

static void die(const char *what, const char *why) {
  fprintf(stderr, "floor_client: %s: %s\n", what, why);
  exit(1);
}

static uint64_t next_random(uint64_t *s) { /* xorshift64 */
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static double uniform(uint64_t *s) { return (double)(next_random(s) >> 11) / 9007199254740992.0; }

/* An id in [1, n] as sysbench 1.0's default --rand-type=special draws it (--rand-spec-pct=1,
 * --rand-spec-res=75, --rand-spec-iter=12): the rows a point select reads decide how much
 * work it is for the server, and sysbench's and oltplab's read these. */
static uint32_t special_id(uint64_t *s, uint32_t n) {
  double t = n - 1, u = uniform(s);
  if (u * t * 100 / (100 - 75) < t) {
    double sum = 0;
    for (int i = 0; i < 12; i++) sum += uniform(s) * (t + 1);
    return 1 + (uint32_t)(sum / 12);
  }
  return 1 + (uint32_t)(u * (t / 100 + 1) + t / 2 - t / 200);
}

/* How one connection's socket waits: blocking, so that a recv(2) waits for the reply and reads
 * it (with FLOOR_CALLS=library, non-blocking). FLOOR_RCVTIMEO_MS (an experiment) gives that wait a
 * timeout, as oltplab's has. */
static void set_wait_mode(int fd) {
  int flags = fcntl(fd, F_GETFL);
  flags = library_calls ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
  if (flags < 0 || fcntl(fd, F_SETFL, flags) < 0) die("fcntl", strerror(errno));
  if (library_calls) return;
  const char *ms = getenv("FLOOR_RCVTIMEO_MS");
  if (ms && atoi(ms) > 0) {
    struct timeval tv = {atoi(ms) / 1000, (atoi(ms) % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv)) die("SO_RCVTIMEO", strerror(errno));
  }
}

static void send_all(int fd, const unsigned char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    if (n < 0) die("send", strerror(errno));
    buf += n;
    len -= (size_t)n;
  }
}

static void wait_readable(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, -1) < 0 && errno != EINTR) die("poll", strerror(errno));
}

/* Reads into buf until complete(buf, len) says the reply is whole; returns its length. */
static size_t read_reply(int fd, unsigned char *buf, int (*complete)(const unsigned char *, size_t)) {
  size_t len = 0;
  if (library_calls && !opt.mysql) wait_readable(fd); /* libpq: poll, then read */
  do {
    ssize_t n = recv(fd, buf + len, REPLY_BYTES - len, 0);
    if (n < 0 && errno == EAGAIN && library_calls) { /* libmariadb: read, poll when empty */
      wait_readable(fd);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue; /* the timeout: wait again */
    if (n <= 0) die("recv", n == 0 ? "the server closed the connection" : strerror(errno));
    len += (size_t)n;
  } while (!complete(buf, len));
  return len;
}

/* -- MariaDB/MySQL: COM_STMT_EXECUTE with one INT parameter, the binary result set ---------- */

/* Whole when the packets so far end with the result set's last EOF (0xFE, after a row or after
 * the metadata's own EOF). Column definitions start with "def"'s length byte (3), rows with 0. */
static int mysql_complete(const unsigned char *buf, size_t len) {
  size_t at = 0;
  int first = 1, eofs = 0, rows = 0;
  while (at + 4 <= len) {
    size_t payload = buf[at] | buf[at + 1] << 8 | (size_t)buf[at + 2] << 16;
    if (at + 4 + payload > len) return 0;
    unsigned char head = buf[at + 4];
    if (head == 0xFF) die("execute", "the server returned an error");
    if (first) {
      if (head == 0x00) return 1; /* an OK packet: no result set */
      first = 0;
    } else if (head == 0xFE && payload < 9) {
      if (rows || ++eofs == 2) return 1;
    } else if (head == 0x00) {
      rows++;
    }
    at += 4 + payload;
  }
  return 0;
}

static void *mysql_thread(void *arg) {
  uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)((intptr_t)arg + 1);
  MYSQL *db = mysql_init(NULL);
  unsigned port = opt.port ? (unsigned)atoi(opt.port) : 3306;
  if (!mysql_real_connect(db, opt.host, opt.user, opt.password, opt.db, port, opt.socket, 0))
    die("connect", mysql_error(db));
  unsigned char request[MAX_TABLES][4 + 18];
  for (int t = 0; t < opt.tables; t++) {
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT c FROM sbtest%d WHERE id=?", t + 1);
    MYSQL_STMT *stmt = mysql_stmt_init(db);
    if (mysql_stmt_prepare(stmt, sql, strlen(sql))) die("prepare", mysql_stmt_error(stmt));
    unsigned long id = stmt->stmt_id;
    unsigned char *p = request[t];
    /* header (length 18, sequence 0); COM_STMT_EXECUTE, the statement, no cursor, iteration 1,
     * the NULL bitmap, "types follow", MYSQL_TYPE_LONG signed, the value (patched per run) */
    unsigned char packet[] = {18, 0, 0, 0, 0x17, id, id >> 8, id >> 16, id >> 24, 0, 1, 0, 0, 0,
                              0, 1, 3, 0, 0, 0, 0, 0};
    memcpy(p, packet, sizeof packet);
  }
  int fd = mysql_get_socket(db);
  set_wait_mode(fd);
  unsigned char *reply = malloc(REPLY_BYTES);
  pthread_barrier_wait(&connected);
  pthread_barrier_wait(&begin);
  long long done = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    unsigned char *p = request[next_random(&seed) % (uint64_t)opt.tables];
    uint32_t row = special_id(&seed, (uint32_t)opt.table_size);
    memcpy(p + 18, &row, 4); /* little-endian, as the protocol */
    send_all(fd, p, 22);
    read_reply(fd, reply, mysql_complete);
    done++;
  }
  atomic_fetch_add(&statements, done);
  return NULL;
}

/* -- PostgreSQL: Bind (text parameter, binary result), Execute, Sync; until ReadyForQuery ---- */

static int pg_complete(const unsigned char *buf, size_t len) {
  size_t at = 0;
  while (at + 5 <= len) {
    uint32_t body = (uint32_t)buf[at + 1] << 24 | buf[at + 2] << 16 | buf[at + 3] << 8 | buf[at + 4];
    if (at + 1 + body > len) return 0;
    if (buf[at] == 'E') die("execute", "the server returned an error");
    if (buf[at] == 'Z') return 1;
    at += 1 + body;
  }
  return 0;
}

static size_t put32(unsigned char *p, uint32_t v) {
  p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
  return 4;
}

static int decimal(char *out, uint32_t v) {
  char digits[10];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10); while (v /= 10);
  for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
  return n;
}

static void *pg_thread(void *arg) {
  uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)((intptr_t)arg + 1);
  const char *keys[] = {"host", "port", "user", "password", "dbname", "sslmode", NULL};
  const char *values[] = {opt.socket ? opt.socket : opt.host, opt.port, opt.user, opt.password,
                          opt.db, "disable", NULL};
  PGconn *db = PQconnectdbParams(keys, values, 0);
  if (PQstatus(db) != CONNECTION_OK) die("connect", PQerrorMessage(db));
  for (int t = 0; t < opt.tables; t++) {
    char sql[64], name[16];
    snprintf(sql, sizeof sql, "SELECT c FROM sbtest%d WHERE id=$1", t + 1);
    snprintf(name, sizeof name, "s%02d", t);
    PGresult *r = PQprepare(db, name, sql, 1, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die("prepare", PQerrorMessage(db));
    PQclear(r);
  }
  int fd = PQsocket(db);
  set_wait_mode(fd);
  unsigned char request[128], *reply = malloc(REPLY_BYTES);
  pthread_barrier_wait(&connected);
  pthread_barrier_wait(&begin);
  long long done = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    int table = (int)(next_random(&seed) % (uint64_t)opt.tables);
    char id[16];
    int id_len = decimal(id, special_id(&seed, (uint32_t)opt.table_size));
    char name[4] = {'s', (char)('0' + table / 10), (char)('0' + table % 10), 0};
    int name_len = 3;
    unsigned char *p = request;
    size_t bind_len = 4 + 1 + (size_t)name_len + 1 + 2 + 2 + 4 + (size_t)id_len + 2 + 2;
    *p++ = 'B';
    p += put32(p, (uint32_t)bind_len);
    *p++ = 0; /* the unnamed portal */
    memcpy(p, name, (size_t)name_len + 1);
    p += name_len + 1;
    memcpy(p, "\0\0\0\1", 4); /* no parameter formats (text), one parameter */
    p += 4;
    p += put32(p, (uint32_t)id_len);
    memcpy(p, id, (size_t)id_len);
    p += id_len;
    memcpy(p, "\0\1\0\1", 4); /* one result format: binary */
    p += 4;
    memcpy(p, "E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04", 15); /* Execute (all rows), Sync */
    p += 15;
    send_all(fd, request, (size_t)(p - request));
    read_reply(fd, reply, pg_complete);
    done++;
  }
  atomic_fetch_add(&statements, done);
  return NULL;
}

/* -- options, threads, report ----------------------------------------------------------------- */

static const char *value_of(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

static void parse(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if ((v = value_of(a, "--db-driver"))) {
      if (strcmp(v, "mysql") && strcmp(v, "pgsql")) die(a, "the drivers are mysql and pgsql");
      opt.mysql = strcmp(v, "mysql") == 0;
    } else if ((v = value_of(a, "--mysql-host")) || (v = value_of(a, "--pgsql-host"))) {
      opt.host = v;
    } else if ((v = value_of(a, "--mysql-port")) || (v = value_of(a, "--pgsql-port"))) {
      opt.port = v;
    } else if ((v = value_of(a, "--mysql-socket"))) {
      opt.socket = v;
    } else if ((v = value_of(a, "--mysql-user")) || (v = value_of(a, "--pgsql-user"))) {
      opt.user = v;
    } else if ((v = value_of(a, "--mysql-password")) || (v = value_of(a, "--pgsql-password"))) {
      opt.password = v;
    } else if ((v = value_of(a, "--mysql-db")) || (v = value_of(a, "--pgsql-db"))) {
      opt.db = v;
    } else if ((v = value_of(a, "--tables"))) {
      opt.tables = atoi(v);
    } else if ((v = value_of(a, "--table-size"))) {
      opt.table_size = atoi(v);
    } else if ((v = value_of(a, "--threads"))) {
      opt.threads = atoi(v);
    } else if ((v = value_of(a, "--time"))) {
      opt.time_s = atof(v);
    } else if (!value_of(a, "--report-interval") && !value_of(a, "--percentile") &&
               strcmp(a, "oltp_point_select") && strcmp(a, "run")) {
      die(a, "not an option of the floor client (it runs oltp_point_select only)");
    }
  }
  if (opt.tables < 1 || opt.tables > MAX_TABLES) die("--tables", "between 1 and 64");
  if (opt.table_size < 1 || opt.threads < 1 || opt.time_s <= 0)
    die("options", "--table-size, --threads and --time must be above 0");
}

int main(int argc, char **argv) {
  parse(argc, argv);
  const char *calls = getenv("FLOOR_CALLS");
  library_calls = calls && strcmp(calls, "library") == 0;
  if (opt.mysql && mysql_library_init(0, NULL, NULL)) die("libmariadb", "cannot initialise");
  pthread_barrier_init(&connected, NULL, (unsigned)opt.threads + 1);
  pthread_barrier_init(&begin, NULL, (unsigned)opt.threads + 1);
  pthread_t *threads = calloc((size_t)opt.threads, sizeof *threads);
  for (int i = 0; i < opt.threads; i++)
    if (pthread_create(&threads[i], NULL, opt.mysql ? mysql_thread : pg_thread, (void *)(intptr_t)i))
      die("pthread_create", strerror(errno));
  pthread_barrier_wait(&connected);
  printf("Threads started!\n");
  fflush(stdout);
  struct timespec t0, t1, nap = {(time_t)opt.time_s, (long)((opt.time_s - (time_t)opt.time_s) * 1e9)};
  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_barrier_wait(&begin);
  nanosleep(&nap, NULL);
  atomic_store(&stop, 1);
  for (int i = 0; i < opt.threads; i++) pthread_join(threads[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  getrusage(RUSAGE_SELF, &r1);
  printf("SQL statistics:\n");
  fflush(stdout);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
#define SECONDS(a, b) ((double)((b).tv_sec - (a).tv_sec) + (double)((b).tv_usec - (a).tv_usec) / 1e6)
  printf("{\"transactions\": %lld, \"seconds\": %.3f, \"user_s\": %.3f, \"kernel_s\": %.3f}\n",
         atomic_load(&statements), seconds, SECONDS(r0.ru_utime, r1.ru_utime), SECONDS(r0.ru_stime, r1.ru_stime));
  return 0;
}
