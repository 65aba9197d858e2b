/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <jansson.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/base64.h"
#include "util/yamljson.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_FILE (1u << 20)

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Reads a small file whole. Returns a NUL-terminated string the caller frees, or NULL. */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *data = malloc(MAX_FILE + 1);
	size_t n = data ? fread(data, 1, MAX_FILE + 1, f) : 0;
	fclose(f);
	if (!data || n > MAX_FILE) {
		free(data);
		return NULL;
	}
	data[n] = '\0';
	return data;
}

static char *trim_dup(const char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	return strndup(s, n);
}

/* Finds the entry named name in a kubeconfig list such as clusters[] and returns its `key`. */
static json_t *named(json_t *root, const char *list, const char *name, const char *key)
{
	json_t *arr = json_object_get(root, list), *item;
	size_t i;
	json_array_foreach(arr, i, item)
	{
		const char *n = json_string_value(json_object_get(item, "name"));
		if (n && !strcmp(n, name))
			return json_object_get(item, key);
	}
	return NULL;
}

/* Loads a credential given inline as base64 (data_key) or as a file path (file_key). */
static int credential(json_t *obj, const char *data_key, const char *file_key, const char *dir,
		      char **out, char *err, size_t errlen)
{
	const char *data = json_string_value(json_object_get(obj, data_key));
	const char *file = json_string_value(json_object_get(obj, file_key));
	*out = NULL;
	if (data) {
		*out = base64_decode(data, NULL);
		if (!*out) {
			errf(err, errlen, "kubeconfig: %s is not valid base64", data_key);
			return -EINVAL;
		}
	} else if (file) {
		char path[4096];
		if (file[0] == '/')
			snprintf(path, sizeof(path), "%s", file);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, file);
		*out = read_file(path);
		if (!*out) {
			errf(err, errlen, "kubeconfig: cannot read %s %s", file_key, path);
			return -ENOENT;
		}
	}
	return 0;
}

extern char **environ;

/* Frees a NULL-terminated array of strings and the array. */
static void free_strings(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* "name=value", a new string or NULL. */
static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *entry = malloc(n);
	if (entry)
		snprintf(entry, n, "%s=%s", name, value);
	return entry;
}

/* The environment of an exec plugin: ours less the names the kubeconfig sets (a variable
 * given twice is read differently by different programs), then the kubeconfig's env entries,
 * then KUBERNETES_EXEC_INFO. A NULL-terminated array, freed with free_strings, or NULL. */
static char **exec_environment(json_t *env, const char *info)
{
	size_t n = 0, extra = json_array_size(env) + 1, k = 0;
	while (environ[n])
		n++;
	char **envp = calloc(n + extra + 1, sizeof(*envp));
	json_t *e;
	size_t i;
	if (!envp)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		int replaced = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
		size_t j;
		json_array_foreach(env, j, e)
		{
			const char *name = json_string_value(json_object_get(e, "name"));
			replaced |= name && strlen(name) == len && !strncmp(name, environ[i], len);
		}
		if (!replaced && !(envp[k++] = strdup(environ[i])))
			goto fail;
	}
	json_array_foreach(env, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *value = json_string_value(json_object_get(e, "value"));
		if (!name || !value)
			continue;
		if (!(envp[k++] = env_entry(name, value)))
			goto fail;
	}
	if (!(envp[k++] = env_entry("KUBERNETES_EXEC_INFO", info)))
		goto fail;
	return envp;
fail:
	free_strings(envp); /* the entry that failed is the array's end */
	return NULL;
}

/* Runs the plugin and reads what it prints, at most MAX_FILE bytes. Its stderr and stdin
 * stay the terminal's, where a plugin may ask for a login. 0 or -errno, err set. */
static int run_exec_plugin(const char *command, char **argv, char **envp, char **out, char *err,
			   size_t errlen)
{
	posix_spawn_file_actions_t actions;
	int fds[2], status = 0, rc;
	pid_t pid;
	size_t len = 0;
	char *data = malloc(MAX_FILE + 1);
	*out = NULL;
	if (!data || pipe(fds) != 0) {
		rc = data ? errno : ENOMEM;
		free(data);
		errf(err, errlen, "exec plugin %s: %s", command, strerror(rc));
		return -rc;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&actions, fds[0]);
	posix_spawn_file_actions_addclose(&actions, fds[1]);
	rc = posix_spawnp(&pid, command, &actions, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		free(data);
		errf(err, errlen, "exec plugin %s: %s", command, strerror(rc));
		return -rc;
	}
	for (;;) {
		ssize_t n = read(fds[0], data + len, len < MAX_FILE ? MAX_FILE + 1 - len : 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len > MAX_FILE)
			break;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len > MAX_FILE || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(data);
		if (len > MAX_FILE)
			errf(err, errlen, "exec plugin %s: printed more than 1 MiB", command);
		else
			errf(err, errlen, "exec plugin %s failed (exit status %d)", command,
			     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	data[len] = '\0';
	*out = data;
	return 0;
}

/*
 * An exec user (client-go's exec credential provider): runs command with args and env, as
 * client.authentication.k8s.io/v1 or v1beta1 say, and takes status.token or
 * status.clientCertificateData and clientKeyData from the ExecCredential it prints. A command
 * with a '/' that is not absolute is relative to the kubeconfig's directory, else PATH finds it.
 */
static int load_exec(json_t *exec, const char *dir, struct kube_config *cfg, char *err,
		     size_t errlen)
{
	const char *command = json_string_value(json_object_get(exec, "command"));
	const char *api = json_string_value(json_object_get(exec, "apiVersion"));
	json_t *args = json_object_get(exec, "args"), *arg;
	char path[4096], info[256], *output = NULL, **argv = NULL, **envp = NULL;
	size_t i;
	int rc = -EINVAL;
	if (!command || !*command || !api) {
		errf(err, errlen, "kubeconfig: exec needs a command and an apiVersion");
		return -EINVAL;
	}
	int n = strchr(command, '/') && command[0] != '/' ?
			snprintf(path, sizeof(path), "%s/%s", dir, command) :
			snprintf(path, sizeof(path), "%s", command);
	int m = snprintf(info, sizeof(info),
			 "{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"spec\":{"
			 "\"interactive\":%s}}",
			 api, isatty(STDIN_FILENO) ? "true" : "false");
	if (n < 0 || (size_t)n >= sizeof(path) || m < 0 || (size_t)m >= sizeof(info)) {
		errf(err, errlen, "kubeconfig: exec command or apiVersion too long");
		return -EINVAL;
	}
	argv = calloc(json_array_size(args) + 2, sizeof(*argv));
	envp = exec_environment(json_object_get(exec, "env"), info);
	if (!argv || !envp || !(argv[0] = strdup(path))) {
		errf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(args, i, arg)
	{
		if (!json_is_string(arg) || !(argv[i + 1] = strdup(json_string_value(arg)))) {
			errf(err, errlen, "kubeconfig: exec args must be strings");
			goto out;
		}
	}
	if ((rc = run_exec_plugin(path, argv, envp, &output, err, errlen)) != 0)
		goto out;
	json_t *cred = json_loads(output, 0, NULL);
	json_t *status = json_object_get(cred, "status");
	const char *kind = json_string_value(json_object_get(cred, "kind"));
	const char *token = json_string_value(json_object_get(status, "token"));
	const char *cert = json_string_value(json_object_get(status, "clientCertificateData"));
	const char *key = json_string_value(json_object_get(status, "clientKeyData"));
	rc = -EINVAL;
	if (!kind || strcmp(kind, "ExecCredential") || (!token && !(cert && key))) {
		errf(err, errlen,
		     "exec plugin %s: no ExecCredential with a token or a client certificate "
		     "and key",
		     command);
	} else if ((token && !(cfg->token = strdup(token))) ||
		   (!token && (!(cfg->cert_pem = strdup(cert)) || !(cfg->key_pem = strdup(key))))) {
		errf(err, errlen, "out of memory");
		rc = -ENOMEM;
	} else {
		rc = 0;
	}
	json_decref(cred);
out:
	free(output);
	free_strings(argv);
	free_strings(envp);
	return rc;
}

static int load_in_cluster(struct kube_config *cfg, char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char server[512];

	if (strchr(host, ':')) /* IPv6 literal */
		snprintf(server, sizeof(server), "https://[%s]:%s", host, port ? port : "443");
	else
		snprintf(server, sizeof(server), "https://%s:%s", host, port ? port : "443");
	cfg->server = strdup(server);
	cfg->ca_pem = read_file(SA_DIR "/ca.crt");
	cfg->token_file = strdup(SA_DIR "/token");
	if (!cfg->server || !cfg->ca_pem || !cfg->token_file) {
		errf(err, errlen, "in-cluster: cannot read %s", SA_DIR);
		return -ENOENT;
	}
	/* Optional: only clients that default a namespace (kubectl's way) look at it. */
	char *ns = read_file(SA_DIR "/namespace");
	cfg->namespace_name = ns ? trim_dup(ns) : NULL;
	free(ns);
	return kube_config_refresh_token(cfg);
}

static int load_file(const char *path, const char *context, unsigned flags, struct kube_config *cfg,
		     char *err, size_t errlen)
{
	struct yamljson_error yerr;
	json_t *docs = NULL;
	char dir[4096];
	int rc = yamljson_load_file(path, &docs, &yerr);
	if (rc != 0) {
		errf(err, errlen, "kubeconfig %s:%d: %s", path, yerr.line, yerr.text);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");

	json_t *root = json_array_get(docs, 0);
	const char *ctx_name =
		context ? context : json_string_value(json_object_get(root, "current-context"));
	json_t *ctx = ctx_name ? named(root, "contexts", ctx_name, "context") : NULL;
	const char *cluster_name = json_string_value(json_object_get(ctx, "cluster"));
	const char *user_name = json_string_value(json_object_get(ctx, "user"));
	json_t *cluster = cluster_name ? named(root, "clusters", cluster_name, "cluster") : NULL;
	json_t *user = user_name ? named(root, "users", user_name, "user") : NULL;
	const char *server = json_string_value(json_object_get(cluster, "server"));

	const char *ns = json_string_value(json_object_get(ctx, "namespace"));

	rc = -EINVAL;
	if (context && !ctx) {
		errf(err, errlen, "kubeconfig %s: context \"%s\" not found", path, context);
		rc = -ENOENT;
		goto out;
	}
	/* The server without its trailing slashes; "" or "/" names nowhere to connect to. */
	size_t server_len = server ? strlen(server) : 0;
	while (server_len && server[server_len - 1] == '/')
		server_len--;
	if (!ctx || !cluster || !server_len) {
		errf(err, errlen, "kubeconfig %s: no usable current-context with a cluster server",
		     path);
		goto out;
	}
	cfg->server = strndup(server, server_len);
	if (!cfg->server || (ns && *ns && !(cfg->namespace_name = strdup(ns)))) {
		rc = -ENOMEM;
		goto out;
	}
	cfg->insecure = json_is_true(json_object_get(cluster, "insecure-skip-tls-verify"));
	if ((rc = credential(cluster, "certificate-authority-data", "certificate-authority", dir,
			     &cfg->ca_pem, err, errlen)) != 0)
		goto out;
	if (user) {
		if ((rc = credential(user, "client-certificate-data", "client-certificate", dir,
				     &cfg->cert_pem, err, errlen)) != 0)
			goto out;
		if ((rc = credential(user, "client-key-data", "client-key", dir, &cfg->key_pem, err,
				     errlen)) != 0)
			goto out;
		const char *token = json_string_value(json_object_get(user, "token"));
		const char *token_file = json_string_value(json_object_get(user, "tokenFile"));
		if (token && !(cfg->token = strdup(token))) {
			rc = -ENOMEM;
			goto out;
		}
		if (token_file) {
			cfg->token_file = strdup(token_file);
			if (!cfg->token_file || (rc = kube_config_refresh_token(cfg)) != 0) {
				errf(err, errlen, "kubeconfig: cannot read tokenFile %s",
				     token_file);
				rc = -ENOENT;
				goto out;
			}
		}
		json_t *exec = json_object_get(user, "exec");
		if (exec && (flags & KUBE_CONFIG_EXEC)) {
			if ((rc = load_exec(exec, dir, cfg, err, errlen)) != 0)
				goto out;
		} else if (exec || json_object_get(user, "auth-provider")) {
			errf(err, errlen, "kubeconfig %s: %s credentials are not supported", path,
			     exec ? "exec" : "auth-provider");
			rc = -ENOTSUP;
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(docs);
	return rc;
}

int kube_config_load(const char *path, struct kube_config *out, char *err, size_t errlen)
{
	return kube_config_load_context(path, NULL, 0, out, err, errlen);
}

int kube_config_load_context(const char *path, const char *context, unsigned flags,
			     struct kube_config *out, char *err, size_t errlen)
{
	char home_path[4096];
	int rc;

	memset(out, 0, sizeof(*out));
	errf(err, errlen, "out of memory");
	if (!path) {
		const char *env = getenv("KUBECONFIG");
		const char *home = getenv("HOME");
		if (env && *env) {
			/* A colon-separated list merges files in client-go; we take the first. */
			snprintf(home_path, sizeof(home_path), "%s", env);
			char *colon = strchr(home_path, ':');
			if (colon)
				*colon = '\0';
			path = home_path;
		} else if (getenv("KUBERNETES_SERVICE_HOST")) {
			if (context) {
				errf(err, errlen,
				     "context \"%s\" not found: in-cluster, no kubeconfig",
				     context);
				return -ENOENT;
			}
			rc = load_in_cluster(out, err, errlen);
			goto done;
		} else if (home) {
			snprintf(home_path, sizeof(home_path), "%s/.kube/config", home);
			path = home_path;
		} else {
			errf(err, errlen, "no kubeconfig: set --kubeconfig or KUBECONFIG");
			return -ENOENT;
		}
	}
	rc = load_file(path, context, flags, out, err, errlen);
done:
	if (rc != 0)
		kube_config_release(out);
	return rc;
}

int kube_config_refresh_token(struct kube_config *cfg)
{
	if (!cfg->token_file)
		return 0;
	char *raw = read_file(cfg->token_file);
	if (!raw)
		return -EIO;
	char *token = trim_dup(raw);
	free(raw);
	if (!token)
		return -ENOMEM;
	free(cfg->token);
	cfg->token = token;
	return 0;
}

void kube_config_release(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->ca_pem);
	free(cfg->cert_pem);
	free(cfg->key_pem);
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->namespace_name);
	memset(cfg, 0, sizeof(*cfg));
}
