/*
 * The floor client: sysbench's oltp_point_select and oltp_read_only reduced to the socket calls,
 * with nothing else per statement. Each connection is opened by a thread of its own with the
 * vendor's library (libmariadb, libpq: the handshake and the prepares, as sysbench prepares
 * them); then its socket is driven by hand: each statement's execute request built from its
 * parameters (drawn as sysbench draws them), one send(2), and a recv(2) that reads the reply
 * (another only when the reply is not complete). That is the least any client that sends a
 * statement and waits for its reply does, so the CPU it takes per transaction is the floor
 * oltplab and sysbench are measured against (bench/vs_sysbench.py --floor;
 * docs/performance-engine.md, "The floor client").
 *
 * Two ways to wait, as the two tools wait:
 * - by default, a thread per connection blocks in its recv(2), as sysbench's threads (and
 *   oltplab's, up to 64 connections) do;
 * - with --event-threads=N, N threads share the connections, each waiting for its sockets in
 *   one epoll_wait(2) and reading those ready, as oltplab's engine threads do for many
 *   connections.
 *
 * It takes sysbench's options for the connection and the load, prints "Threads started!" once
 * every connection is open and prepared, "SQL statistics:" when the load ends, and then one
 * line of JSON: {"transactions": N, "seconds": S, ...}.
 *
 *   cc -O2 -o floor_client floor_client.c $(mariadb_config --cflags --libs) -I$(pg_config
 *      --includedir) -lpq -lpthread
 *   floor_client oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306
 *      --mysql-user=U --mysql-password=P --mysql-db=D --tables=4 --table-size=10000
 *      --threads=4096 --time=10 --event-threads=1
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
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TABLES 64
#define REPLY_BYTES 32768 /* a 100-row range reply is about 13 KB */

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
static atomic_llong transactions;

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

/* Reads into buf until complete(buf, len) says the reply is whole. */
static void read_reply(int fd, unsigned char *buf, int (*complete)(const unsigned char *, size_t)) {
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
}

/* -- the workloads: the statements a transaction sends, as sysbench's scripts send them ------ */

/* The statements sysbench's oltp_common.lua prepares, per table ("%d"), with the server's
 * placeholders in the "%s" (BEGIN and COMMIT once per connection, as sysbench prepares them). */
enum kind { POINT, SIMPLE, SUM, ORDER, DISTINCT, BEGIN_TRX, COMMIT_TRX, KINDS };
static const char *sql_of[KINDS] = {
    "SELECT c FROM sbtest%d WHERE id=%s",
    "SELECT c FROM sbtest%d WHERE id BETWEEN %s AND %s",
    "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN %s AND %s",
    "SELECT c FROM sbtest%d WHERE id BETWEEN %s AND %s ORDER BY c",
    "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN %s AND %s ORDER BY c",
    "BEGIN",
    "COMMIT",
};
static const int params_of[KINDS] = {1, 2, 2, 2, 2, 0, 0};
#define RANGE_SIZE 100 /* sysbench's --range-size */

/* One transaction: oltp_point_select's one point select, or oltp_read_only's BEGIN, 10 point
 * selects, the four ranges and COMMIT (its defaults). */
static int program[16], program_len;
static int read_only;

static void set_program(void) {
  program_len = 0;
  if (!read_only) {
    program[program_len++] = POINT;
    return;
  }
  program[program_len++] = BEGIN_TRX;
  for (int i = 0; i < 10; i++) program[program_len++] = POINT;
  for (int k = SIMPLE; k <= DISTINCT; k++) program[program_len++] = k;
  program[program_len++] = COMMIT_TRX;
}

/* One connection: its socket, its statements, where it is in its transaction and the reply
 * read so far. */
struct conn {
  int fd;
  uint64_t seed;
  uint32_t stmt_id[MAX_TABLES][KINDS]; /* MariaDB's statement ids */
  int step, table;
  size_t have;
  unsigned char *reply;
};

static struct conn *conns;
static int event_threads; /* 0: a thread per connection, blocking; else epoll threads */

/* The next statement's kind, its table (drawn per group of statements, as sysbench draws
 * get_table_num() per execute_* function) and its parameters. */
static int next_statement(struct conn *c, uint32_t *a, uint32_t *b) {
  int kind = program[c->step];
  if (kind == BEGIN_TRX || kind == COMMIT_TRX) {
    c->table = 0;
  } else if (c->step == 0 || program[c->step - 1] != kind) {
    c->table = (int)(next_random(&c->seed) % (uint64_t)opt.tables);
  }
  *a = special_id(&c->seed, (uint32_t)opt.table_size);
  *b = *a + RANGE_SIZE - 1;
  return kind;
}

/* After a reply: on to the next statement; 1 when that ended a transaction. */
static int advance(struct conn *c) {
  c->have = 0;
  if (++c->step < program_len) return 0;
  c->step = 0;
  return 1;
}

/* -- MariaDB/MySQL: COM_STMT_EXECUTE with INT parameters, the binary result set ------------ */

/* Whole when the packets so far end with the result set's last EOF (0xFE, after a row or after
 * the metadata's own EOF), or with an OK packet for a statement without a result (BEGIN,
 * COMMIT). Column definitions start with "def"'s length byte (3), rows with 0. */
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

static void put_le32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); /* little-endian, as the protocol */ }

/* header, COM_STMT_EXECUTE, the statement, no cursor, iteration 1; with parameters: the NULL
 * bitmap, "types follow", MYSQL_TYPE_LONG signed for each, their values. */
static size_t mysql_request(struct conn *c, unsigned char *p) {
  uint32_t a, b;
  int kind = next_statement(c, &a, &b), n = params_of[kind];
  unsigned char *q = p + 4;
  *q++ = 0x17;
  put_le32(q, c->stmt_id[c->table][kind]);
  q += 4;
  *q++ = 0;
  put_le32(q, 1);
  q += 4;
  if (n > 0) {
    *q++ = 0;
    *q++ = 1;
    for (int i = 0; i < n; i++) *q++ = 3, *q++ = 0;
    put_le32(q, a);
    q += 4;
    if (n == 2) put_le32(q, b), q += 4;
  }
  size_t len = (size_t)(q - p) - 4;
  p[0] = (unsigned char)len, p[1] = 0, p[2] = 0, p[3] = 0;
  return (size_t)(q - p);
}

static void mysql_open(struct conn *c) {
  MYSQL *db = mysql_init(NULL);
  unsigned port = opt.port ? (unsigned)atoi(opt.port) : 3306;
  if (!mysql_real_connect(db, opt.host, opt.user, opt.password, opt.db, port, opt.socket, 0))
    die("connect", mysql_error(db));
  for (int t = 0; t < opt.tables; t++) {
    for (int k = 0; k < KINDS; k++) {
      if (t > 0 && (k == BEGIN_TRX || k == COMMIT_TRX)) continue;
      if (!read_only && k != POINT) continue;
      char sql[96];
      snprintf(sql, sizeof sql, sql_of[k], t + 1, "?", "?");
      MYSQL_STMT *stmt = mysql_stmt_init(db);
      if (mysql_stmt_prepare(stmt, sql, strlen(sql))) die("prepare", mysql_stmt_error(stmt));
      c->stmt_id[t][k] = (uint32_t)stmt->stmt_id;
    }
  }
  c->fd = mysql_get_socket(db);
}

/* -- PostgreSQL: Bind (text parameters, binary result), Execute, Sync; until ReadyForQuery --- */

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

/* The statement of table t and kind k: "sTTk". */
static void pg_name(char name[5], int t, int k) {
  name[0] = 's', name[1] = (char)('0' + t / 10), name[2] = (char)('0' + t % 10);
  name[3] = (char)('0' + k), name[4] = 0;
}

static size_t pg_request(struct conn *c, unsigned char *request) {
  uint32_t values[2];
  int kind = next_statement(c, &values[0], &values[1]), n = params_of[kind];
  char name[5];
  pg_name(name, c->table, kind);
  unsigned char *p = request + 5; /* 'B' and the length, written last */
  *p++ = 0; /* the unnamed portal */
  memcpy(p, name, 5);
  p += 5;
  memcpy(p, "\0\0", 2); /* no parameter formats: text */
  p += 2;
  *p++ = 0, *p++ = (unsigned char)n;
  for (int i = 0; i < n; i++) {
    char digits[16];
    int len = decimal(digits, values[i]);
    p += put32(p, (uint32_t)len);
    memcpy(p, digits, (size_t)len);
    p += len;
  }
  memcpy(p, "\0\1\0\1", 4); /* one result format: binary */
  p += 4;
  request[0] = 'B';
  put32(request + 1, (uint32_t)(p - request - 1));
  memcpy(p, "E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04", 15); /* Execute (all rows), Sync */
  return (size_t)(p + 15 - request);
}

static void pg_open(struct conn *c) {
  const char *keys[] = {"host", "port", "user", "password", "dbname", "sslmode", NULL};
  const char *values[] = {opt.socket ? opt.socket : opt.host, opt.port, opt.user, opt.password,
                          opt.db, "disable", NULL};
  PGconn *db = PQconnectdbParams(keys, values, 0);
  if (PQstatus(db) != CONNECTION_OK) die("connect", PQerrorMessage(db));
  for (int t = 0; t < opt.tables; t++) {
    for (int k = 0; k < KINDS; k++) {
      if (t > 0 && (k == BEGIN_TRX || k == COMMIT_TRX)) continue;
      if (!read_only && k != POINT) continue;
      char sql[96], name[5];
      snprintf(sql, sizeof sql, sql_of[k], t + 1, "$1", "$2");
      pg_name(name, t, k);
      PGresult *r = PQprepare(db, name, sql, params_of[k], NULL);
      if (PQresultStatus(r) != PGRES_COMMAND_OK) die("prepare", PQerrorMessage(db));
      PQclear(r);
    }
  }
  c->fd = PQsocket(db);
}

/* -- the load: a thread per connection (blocking), or epoll threads sharing them ------------ */

#define REQUEST_BYTES 128

static size_t request_of(struct conn *c, unsigned char *buf) {
  return opt.mysql ? mysql_request(c, buf) : pg_request(c, buf);
}

static int complete(struct conn *c) {
  return opt.mysql ? mysql_complete(c->reply, c->have) : pg_complete(c->reply, c->have);
}

static void *connection_thread(void *arg) {
  struct conn *c = &conns[(intptr_t)arg];
  c->seed = 0x9E3779B97F4A7C15ULL * (uint64_t)((intptr_t)arg + 1);
  c->reply = malloc(REPLY_BYTES);
  if (!c->reply) die("malloc", strerror(errno));
  (opt.mysql ? mysql_open : pg_open)(c);
  if (event_threads > 0) return NULL; /* connected: the epoll threads take it from here */
  set_wait_mode(c->fd);
  pthread_barrier_wait(&connected);
  pthread_barrier_wait(&begin);
  unsigned char request[REQUEST_BYTES];
  long long done = 0;
  /* The transaction under way when the time is up is finished, as sysbench finishes it: a
   * transaction's CPU is then that of its whole statements. */
  while (c->step > 0 || !atomic_load_explicit(&stop, memory_order_relaxed)) {
    send_all(c->fd, request, request_of(c, request));
    read_reply(c->fd, c->reply, opt.mysql ? mysql_complete : pg_complete);
    done += advance(c);
  }
  atomic_fetch_add(&transactions, done);
  return NULL;
}

/* Every event_threads-th connection, non-blocking, in one epoll set: a reply is read when its
 * socket is ready (level-triggered), and the next statement sent once it is whole. */
static void *event_thread(void *arg) {
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1", strerror(errno));
  for (int i = (int)(intptr_t)arg; i < opt.threads; i += event_threads) {
    int flags = fcntl(conns[i].fd, F_GETFL);
    if (flags < 0 || fcntl(conns[i].fd, F_SETFL, flags | O_NONBLOCK) < 0) die("fcntl", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev)) die("epoll_ctl", strerror(errno));
  }
  pthread_barrier_wait(&begin);
  unsigned char request[REQUEST_BYTES];
  int busy = 0; /* connections with a statement out */
  for (int i = (int)(intptr_t)arg; i < opt.threads; i += event_threads, busy++)
    send_all(conns[i].fd, request, request_of(&conns[i], request));
  struct epoll_event ready[256];
  long long done = 0;
  /* Once the time is up, each connection finishes its transaction and sends nothing more. */
  while (busy > 0) {
    int n = epoll_wait(ep, ready, 256, 100);
    if (n < 0 && errno != EINTR) die("epoll_wait", strerror(errno));
    for (int k = 0; k < n; k++) {
      struct conn *c = ready[k].data.ptr;
      ssize_t got = recv(c->fd, c->reply + c->have, REPLY_BYTES - c->have, 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) die("recv", got == 0 ? "the server closed the connection" : strerror(errno));
      c->have += (size_t)got;
      if (!complete(c)) continue;
      done += advance(c);
      if (c->step == 0 && atomic_load_explicit(&stop, memory_order_relaxed))
        busy--;
      else
        send_all(c->fd, request, request_of(c, request));
    }
  }
  atomic_fetch_add(&transactions, done);
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
    } else if ((v = value_of(a, "--event-threads"))) {
      event_threads = atoi(v);
    } else if (strcmp(a, "oltp_point_select") == 0 || strcmp(a, "oltp_read_only") == 0) {
      read_only = strcmp(a, "oltp_read_only") == 0;
    } else if (!value_of(a, "--report-interval") && !value_of(a, "--percentile") && strcmp(a, "run")) {
      die(a, "not an option of the floor client (it runs oltp_point_select and oltp_read_only)");
    }
  }
  if (opt.tables < 1 || opt.tables > MAX_TABLES) die("--tables", "between 1 and 64");
  if (opt.table_size < 1 || opt.threads < 1 || opt.time_s <= 0 || event_threads < 0)
    die("options", "--table-size, --threads and --time must be above 0, --event-threads 0 or more");
  if (event_threads > opt.threads) event_threads = opt.threads;
}

int main(int argc, char **argv) {
  parse(argc, argv);
  set_program();
  const char *calls = getenv("FLOOR_CALLS");
  library_calls = calls && strcmp(calls, "library") == 0;
  if (library_calls && event_threads > 0) die("FLOOR_CALLS=library", "a thread per connection only");
  if (opt.mysql && mysql_library_init(0, NULL, NULL)) die("libmariadb", "cannot initialise");
  conns = calloc((size_t)opt.threads, sizeof *conns);
  pthread_t *threads = calloc((size_t)opt.threads, sizeof *threads);
  if (!conns || !threads) die("calloc", strerror(errno));
  /* A thread per connection connects it (and, without --event-threads, drives it). */
  int drivers = event_threads > 0 ? event_threads : opt.threads;
  pthread_barrier_init(&connected, NULL, (unsigned)opt.threads + 1);
  pthread_barrier_init(&begin, NULL, (unsigned)drivers + 1);
  for (int i = 0; i < opt.threads; i++)
    if (pthread_create(&threads[i], NULL, connection_thread, (void *)(intptr_t)i))
      die("pthread_create", strerror(errno));
  if (event_threads > 0) {
    for (int i = 0; i < opt.threads; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < event_threads; i++)
      if (pthread_create(&threads[i], NULL, event_thread, (void *)(intptr_t)i))
        die("pthread_create", strerror(errno));
  } else {
    pthread_barrier_wait(&connected);
  }
  printf("Threads started!\n");
  fflush(stdout);
  struct timespec t0, t1, nap = {(time_t)opt.time_s, (long)((opt.time_s - (time_t)opt.time_s) * 1e9)};
  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_barrier_wait(&begin);
  nanosleep(&nap, NULL);
  atomic_store(&stop, 1);
  for (int i = 0; i < drivers; i++) pthread_join(threads[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  getrusage(RUSAGE_SELF, &r1);
  printf("SQL statistics:\n");
  fflush(stdout);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
#define SECONDS(a, b) ((double)((b).tv_sec - (a).tv_sec) + (double)((b).tv_usec - (a).tv_usec) / 1e6)
  printf("{\"transactions\": %lld, \"seconds\": %.3f, \"user_s\": %.3f, \"kernel_s\": %.3f}\n",
         atomic_load(&transactions), seconds, SECONDS(r0.ru_utime, r1.ru_utime), SECONDS(r0.ru_stime, r1.ru_stime));
  return 0;
}
