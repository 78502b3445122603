"""The scrubbing corpus, second part (issue 37): the families that leaked (OpenAI `sk-None-` keys, `.npmrc`,
command-line passwords, Kubernetes Secret manifests, Discord bot tokens, `.pgpass`, Twilio key pairs, AWS secrets
in prose, passwords in sentences), `KEY=value` values holding `&`, `;` or `,`, more of every earlier family, and
ordinary technical text that must come back unchanged (among it the three false redactions the issue found).

Synthetic like the first part: random parts come from `fake`, seeded; no value is anyone's secret.
"""

from __future__ import annotations

import base64
import json
import string

from tests.data.credential_values import BASE64, HEX, URL_SAFE, Credential, fake, jwt, pem_body


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _discord(seed: str) -> str:
    user_id = "1" + fake(f"{seed}-id", 18, string.digits)
    return (base64.b64encode(user_id.encode()).decode().rstrip("=") + "." + fake(f"{seed}-ts", 6, URL_SAFE) + "."
            + fake(f"{seed}-mac", 38, URL_SAFE))


def _k8s_secret(name: str, entries: dict[str, str], kind: str = "Opaque") -> str:
    data = "".join(f"  {key}: {value}\n" for key, value in entries.items())
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: prod\ntype: {kind}\ndata:\n{data}"


def _leaked_families() -> list[Credential]:
    sk_none = ["sk-None-" + fake(f"sk-none-{n}", 48) for n in range(3)]
    npm = [fake(f"npmrc-{n}", 36, HEX) for n in range(2)]
    pem = _b64(f"-----BEGIN PRIVATE KEY-----\n{pem_body('k8s-tls')}\n-----END PRIVATE KEY-----\n")
    rsa = _b64(f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body('k8s-rsa')}\n-----END RSA PRIVATE KEY-----\n")
    crt = _b64("-----BEGIN CERTIFICATE-----\nMIIC" + fake("crt", 60, BASE64) + "\n-----END CERTIFICATE-----\n")
    dockercfg = _b64(json.dumps({"auths": {"registry.acme.internal": {
        "auth": _b64("ci-bot:" + fake("dockercfg", 20))}}}))
    opaque = _b64("Opaque-" + fake("opaque", 16))
    discord = [_discord(f"discord-bot-{n}") for n in range(3)]
    twilio_sid = ["SK" + fake(f"tw-sid-{n}", 32, HEX) for n in range(3)]
    twilio_secret = [fake(f"tw-secret-{n}", 32) for n in range(3)]
    aws = [fake(f"aws-prose-{n}", 40, BASE64) for n in range(3)]
    return [
        Credential("openai-api-key", f"The batch job still uses {sk_none[0]} from the old org", sk_none[0]),
        Credential("openai-api-key", f"OPENAI_KEY={sk_none[1]}", sk_none[1]),
        Credential("openai-api-key", f'client = OpenAI(api_key="{sk_none[2]}")', sk_none[2]),
        Credential("config-file-secret", f"//registry.npmjs.org/:_authToken={npm[0]}", npm[0]),
        Credential("config-file-secret", f"@acme:registry=https://npm.acme.internal/\n"
                                         f"//npm.acme.internal/:_authToken={npm[1]}\nalways-auth=true", npm[1]),
        Credential("config-file-secret", f"_auth={_b64('deploy:Npm-Pa55-2026')}\nemail=ci@acme.com",
                   _b64("deploy:Npm-Pa55-2026")),
        Credential("config-file-secret", "//nexus.acme.internal/repository/npm/:_password=TmV4dXNQYXNzMQ==",
                   "TmV4dXNQYXNzMQ=="),
        Credential("command-line-password", "curl -u deploy:Hunter2Zebra https://ci.acme.internal/api/json",
                   "Hunter2Zebra"),
        Credential("command-line-password", "curl -s --user admin:Gr8-Sc0tt! -X POST https://jenkins.acme.internal/",
                   "Gr8-Sc0tt!"),
        Credential("command-line-password", "wget -q --user ops:Wg3tPass http://files.acme.internal/",
                   "Wg3tPass"),
        Credential("command-line-password", "curl -fsSL -u 'svc-backup:Backup#Night42' https://nas.acme.internal",
                   "Backup#Night42"),
        Credential("command-line-password", "mysql -u root -pS3cretRoot billing < dump.sql", "S3cretRoot"),
        Credential("command-line-password", "mysqldump -h db.acme.internal -u backup -p'Dump It 99' shop",
                   "Dump It 99"),
        Credential("command-line-password", "mysqladmin -uroot -pMaria2026x status", "Maria2026x"),
        Credential("command-line-password", 'mariadb -h 10.0.4.12 -u app -p"Ar1a&Co" app_prod', "Ar1a&Co"),
        Credential("command-line-password", "redis-cli -h cache.acme.internal -a 'R3dis!pw' ping", "R3dis!pw"),
        Credential("command-line-password", "redis-cli -p 6380 -a Cach3Pass --no-auth-warning info", "Cach3Pass"),
        Credential("command-line-password", "redis-cli --pass s3ss10nStore -n 2 keys '*'", "s3ss10nStore"),
        Credential("command-line-password", "docker login -u ci -p Dock3rPa55 registry.acme.internal",
                   "Dock3rPa55"),
        Credential("command-line-password", "podman login --username bot --password Podm4n-Bot quay.acme.io",
                   "Podm4n-Bot"),
        Credential("command-line-password", "helm registry login ghcr.io -u acme -p H3lmChart5", "H3lmChart5"),
        Credential("command-line-password", "sshpass -p 'Ssh Pass 7' ssh ops@bastion.acme.internal", "Ssh Pass 7"),
        Credential("kubernetes-secret", _k8s_secret("web-tls", {"tls.crt": crt, "tls.key": pem},
                                                    "kubernetes.io/tls"), pem, kept="  tls.key: "),
        Credential("kubernetes-secret", _k8s_secret("regcred", {".dockerconfigjson": dockercfg},
                                                    "kubernetes.io/dockerconfigjson"), dockercfg),
        Credential("kubernetes-secret", _k8s_secret("app-env", {"DB_USER": _b64("app"), "API_TOKEN": opaque}),
                   opaque, kept="  API_TOKEN: "),
        Credential("base64-private-key", f"Helm value ingress.tlsKey: {rsa}", rsa),
        Credential("base64-private-key", f"CI variable SSH_KEY_B64={pem}", pem),
        Credential("discord-bot-token", f"Discord bot token {discord[0]}", discord[0]),
        Credential("discord-bot-token", f"client.run('{discord[1]}')", discord[1]),
        Credential("discord-bot-token", f"The moderation bot logs in with {discord[2]} on startup", discord[2]),
        Credential("config-file-secret", "db.acme.internal:5432:billing:app:Pgp4ss!word", "Pgp4ss!word"),
        Credential("config-file-secret", "# ~/.pgpass\n*:5432:*:replicator:Repl1cate-Me\n", "Repl1cate-Me",
                   kept="# ~/.pgpass\n*:5432:*:replicator:"),
        Credential("config-file-secret", "localhost:*:analytics:report_ro:ro_only_77", "ro_only_77"),
        Credential("config-file-secret", "pg-primary.acme.internal:6432:app:pgbouncer:B0uncer\\:Pw",
                   "B0uncer\\:Pw"),
        Credential("paired-secret", f"Twilio key {twilio_sid[0]} secret {twilio_secret[0]}", twilio_secret[0],
                   kept="Twilio key "),
        Credential("paired-secret", f"TWILIO_API_KEY={twilio_sid[1]}\nTWILIO_API_SECRET={twilio_secret[1]}",
                   twilio_secret[1], kept="TWILIO_API_KEY="),
        Credential("paired-secret", f"API key SID {twilio_sid[2]} / {twilio_secret[2]} for the SMS sender",
                   twilio_secret[2], kept=" for the SMS sender"),
        Credential("paired-secret", f"the secret access key for the backup user is {aws[0]}", aws[0]),
        Credential("paired-secret", f"Secret key of the billing exporter, as AWS showed it once: {aws[1]}", aws[1]),
        Credential("paired-secret", f"The AWS secret key we gave Initech ({aws[2]}) expires in May", aws[2]),
    ]


def _sentence_passwords() -> list[Credential]:
    sentences = [
        ("The password for the staging server is Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("The staging database password is Blu3-Harbor!", "Blu3-Harbor!"),
        ("FYI the password for the Grafana admin is now Graf4naAdm1n", "Graf4naAdm1n"),
        ("root pw: Qwerty!234", "Qwerty!234"),
        ("NAS root pw is Nas-R00t-2026", "Nas-R00t-2026"),
        ("jenkins pwd: J3nk1ns#Ci", "J3nk1ns#Ci"),
        ("Router login is admin / Linksys-Blue-77", "Linksys-Blue-77"),
        ("Switch login: admin/Sw1tchPort!", "Sw1tchPort!"),
        ("Printer creds are admin / Pr1nt3r2026", "Pr1nt3r2026"),
        ("Door passcode is 4417#", "4417#"),
        ("The alarm pin code is 90210", "90210"),
        ("Server room PIN: 7731", "7731"),
        ("guest wifi pass Sunflower-42", "Sunflower-42"),
        ("VPN pass: Tunnel-Vision-8", "Tunnel-Vision-8"),
        ("admin pass is Adm1nistrat0r", "Adm1nistrat0r"),
        ("The passphrase for the release signing key is 'purple monkey dishwasher 9'", "purple monkey dishwasher 9"),
        ("Wi-Fi password for the office: C0ffee&Cake", "C0ffee&Cake"),
        ("The password on the shared Figma account was changed to F1gma-Team!", "F1gma-Team!"),
    ]
    return [Credential("sentence-password", text, secret) for text, secret in sentences]


def _key_values() -> list[Credential]:
    pairs = [
        ("SMTP_PASS=Mail&Pass99", "Mail&Pass99"),
        ("export REDIS_PASSWORD=Red;s-Cache-1", "Red;s-Cache-1"),
        ("LDAP_BIND_PASSWORD=Ld4p,Bind,Pw ./sync.sh", "Ld4p,Bind,Pw"),
        ("api_key=7f3c9a1e5b2d8c4f6a0e&region=eu-west-1", "7f3c9a1e5b2d8c4f6a0e"),
        ("DB_PASS=Acme&Co;2026 docker compose up", "Acme&Co;2026"),
        ("POSTGRES_PASSWORD=p0stgres&friends", "p0stgres&friends"),
    ]
    return [Credential("labelled-secret", text, secret) for text, secret in pairs]


def _more_of_every_family() -> list[Credential]:
    ghp, glpat = "ghp_" + fake("ghp-2", 36), "glpat-" + fake("glpat-2", 20, URL_SAFE)
    xoxp = "xoxp-" + fake("xoxp-a", 12, string.digits) + "-" + fake("xoxp-b", 12, string.digits) + "-" + fake(
        "xoxp-c", 32, HEX)
    stripe = "sk_" + "test_" + fake("stripe-2", 24)
    token = jwt("globex-reporting")
    anthropic = "sk-ant-admin01-" + fake("anthropic-2", 80, URL_SAFE) + "AA"
    openai = "sk-svcacct-" + fake("openai-svc", 60, URL_SAFE)
    hf = "hf_" + fake("hf-2", 34, string.ascii_letters)
    return [
        Credential("github-token", f"GITHUB_TOKEN={ghp} gh release create v1.2.0", ghp),
        Credential("gitlab-token", f"The runner registers with {glpat}", glpat),
        Credential("slack-token", f"Workspace admin token {xoxp} can invite users", xoxp),
        Credential("stripe-key", f"Test mode key for the Globex sandbox: {stripe}", stripe),
        Credential("jwt", f"Authorization for the reporting API uses {token}", token),
        Credential("anthropic-api-key", f"The admin console key {anthropic} manages workspaces", anthropic),
        Credential("openai-api-key", f"Service account key {openai} belongs to the indexer", openai),
        Credential("huggingface-token", f"HF_TOKEN={hf} huggingface-cli download acme/ranker", hf),
        Credential("url-credentials", "Broker at amqps://events:Ev3nts-Bus@mq.globex.internal:5671/prod",
                   "Ev3nts-Bus"),
        Credential("url-credentials", "SENTRY_DSN=https://ops:Dsn-Pw-88@sentry.acme.internal/4", "Dsn-Pw-88"),
        Credential("url-credentials", "ftp://upload:Ftp!Upl0ad@files.initech.com/incoming", "Ftp!Upl0ad"),
        Credential("labelled-secret", "The Initech API key: 5b1e9d7c3a2f4e6b8d0c", "5b1e9d7c3a2f4e6b8d0c"),
        Credential("labelled-secret", "webhook_secret: wh-7Kq2Lm9Xz4Rt", "wh-7Kq2Lm9Xz4Rt"),
        Credential("labelled-secret", "KEYCLOAK_ADMIN_PASSWORD=Keyc10ak!Adm", "Keyc10ak!Adm"),
        Credential("labelled-secret", "grafana:\n  admin_password: Graf-Adm1n-Pw\n  port: 3000", "Graf-Adm1n-Pw"),
        Credential("labelled-secret", 'settings.json: {"clientSecret": "cs-4f9a2b7e1d3c"}', "cs-4f9a2b7e1d3c"),
        Credential("cli-flag-secret", "psql --password='Pg Night 3' -h replica", "Pg Night 3"),
        Credential("cli-flag-secret", "terraform login --token=tfc-9aB3xK2mQ7", "tfc-9aB3xK2mQ7"),
        Credential("xml-secret", "<add key=\"smtp\" /><smtpPassword>Smtp-Xml-9</smtpPassword>", "Smtp-Xml-9"),
        Credential("netrc-password", "machine git.globex.com login deploy password Netrc-Gl0bex", "Netrc-Gl0bex"),
        Credential("connection-string-secret",
                   "Host=pg.acme.internal;Port=5432;Username=app;Password=Npgsql Night 4;Database=app",
                   "Npgsql Night 4"),
        Credential("authorization-header", "Proxy-Authorization: Bearer px-7Hq2Zk9Lm4", "px-7Hq2Zk9Lm4"),
        Credential("bearer-token", "The probe sends Bearer 3e8f1a9c7b2d5e4f to /ready", "3e8f1a9c7b2d5e4f"),
    ]


MORE_POSITIVES: list[Credential] = [*_leaked_families(), *_sentence_passwords(), *_key_values(),
                                    *_more_of_every_family()]

MORE_ORDINARY: list[str] = [
    # the three false redactions the issue found
    "PWD=/home/runner/builds/api/api",
    "pass=142 fail=0",
    "kid=2024-05",
    "tests: pass=142 fail=0 skip=3 in 41s",
    "JWKS rotation: kid=2024-05 is the current signing key",
    "The API key: kid=2024-05 (see the JWKS endpoint)",
    "OLDPWD=/home/runner PWD=/home/runner/work",
    # the new families' words, without a secret
    "Run mysql -p to be prompted for the password",
    "mysql -u root -p billing asks for the password interactively",
    "Use curl -u with your own user name and read the password from a prompt",
    "curl -u $USER:$TOKEN is how the docs show basic auth",
    "redis-cli -a is deprecated in favour of REDISCLI_AUTH",
    "docker login -u ci --password-stdin registry.acme.internal",
    "docker login -p is insecure; use --password-stdin",
    "sshpass -p is not allowed on the bastion",
    "The .npmrc file holds the registry URL and always-auth=true",
    "Put _authToken=${NPM_TOKEN} in .npmrc and set the variable in CI",
    "kind: Secret objects are encrypted at rest in etcd",
    "kind: Secret\nmetadata:\n  name: app-env\nstringData:\n  LOG_LEVEL: info",
    "apiVersion: v1\nkind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  REPLICAS: MTIz",
    "The tls.key entry of the ingress secret is rotated by cert-manager",
    "Each line of .pgpass is hostname:port:database:username:password",
    "The .pgpass file must be chmod 0600 or psql ignores it",
    "Discord bot tokens have three dot-separated parts",
    "Twilio API keys start with SK and come with a secret shown once",
    "The AWS secret access key is shown only when the key is created",
    "The secret key rotation for the backup user is due in May",
    "The password for the staging server is in the team vault",
    "The password for the staging server is stored in 1Password",
    "Router login is admin / see the label under the device",
    "Door passcode is required after 22:00",
    "The pass rate is 97% on the nightly run",
    "All 412 tests pass on Python 3.12",
    "Wi-Fi password is on the whiteboard in room B-12",
    "root pw: see the vault entry 'nas-root'",
    "The PIN is four digits and changes monthly",
    "A pin: v2.3 of the chart is required by the operator",
    "Password rotation happens every 90 days for service accounts",
    "The login is admin by default; change it on first boot",
    "Passwords must not appear in shell history",
    "SMTP_HOST=smtp.acme.internal SMTP_PORT=587",
    "DATABASE_URL=postgres://app@db.acme.internal:5432/app?sslmode=require",
    "https://acme.com/search?q=password&lang=en",
    "The query string ?page=2&limit=50&sort=created_at is cached",
    "feature_flags=search,recall,briefing",
    "LD_LIBRARY_PATH=/usr/local/lib;/opt/acme/lib",
    "export PATH=$HOME/.local/bin:$PATH",
    "HOME=/home/runner USER=runner SHELL=/bin/bash",
    # ordinary engineering notes
    "The dedup path compares content hashes before embedding",
    "Acme's ingestion runs every 15 minutes from the S3 bucket acme-raw",
    "Globex asked for a weekly export in CSV with UTF-8 BOM",
    "The OpenSearch cluster has three data nodes and two replicas",
    "We pinned numpy below 2.0 until the ranker is rebuilt",
    "p95 latency for /memory/search is 180 ms at 50 rps",
    "Initech's SSO uses SAML with a 15 minute clock skew allowance",
    "The Lambda timeout is 29 seconds behind API Gateway",
    "Use ruff format before committing; CI runs ruff check",
    "The migration adds a GSI on client_id and created_at",
    "Rollback plan: redeploy v1.8.3 and replay the outbox",
    "The nightly consolidation merged 12 duplicate facts",
    "Token budget for recall is 1,200 tokens per turn",
    "The embedding model is all-MiniLM-L6-v2 quantised to int8",
    "EventBridge triggers the decay job at 03:00 UTC",
    "Step Functions retries the research step three times with backoff",
    "We store timestamps as ISO 8601 with a Z suffix",
    "The dashboard shows the top 10 entities by mentions",
    "Set ZENGRAM_DATA_DIR to keep data outside the repository",
    "The CLI reads BRAIN_API_KEY from the environment",
    "gzip level 6 gave the best size/CPU trade-off for exports",
    "The rate limit is 60 writes per minute per key",
    "The recall cutoff of 0.3 is calibrated on 40 labelled turns",
    "Kubernetes liveness probe hits /health every 10 seconds",
    "The secret manager caches values for 300 seconds",
    "Our token counter uses tiktoken's cl100k_base encoding",
    "The key rotation job emails owners 14 days ahead",
    "Use a passphrase manager; never reuse passwords",
    "Keep credentials out of commit messages and tickets",
    "Bearer tokens are validated against the JWKS endpoint",
    "Basic auth stays disabled on the public load balancer",
    "The API key header is x-api-key; Bearer also works",
    "The private key never leaves the HSM",
    "Acme rotated their signing key on 2026-03-01",
    "The webhook secret is configured per client in the dashboard",
    "We moved the staging database to db-stg.acme.internal",
    "Globex's VPN uses WireGuard on port 51820",
    "The Redis cache evicts with allkeys-lru at 2 GB",
    "MySQL 8.0.36 fixed the replication lag we saw",
    "The docker registry mirror lives at registry.acme.internal:5000",
    "Helm chart version 4.2.0 adds a PodDisruptionBudget",
    "curl -sSf https://acme.com/install.sh | sh is discouraged",
    "The password reset email expires after 30 minutes",
    "Passcodes are sent by SMS to the on-call phone",
    "The admin pass-through proxy forwards /internal only",
]

MORE_NEAR_MISSES: dict[str, list[str]] = {
    "command-line-password": ["mysql -u root -p billing", "docker login -u ci --password-stdin registry",
                              "curl -u $USER:$TOKEN https://api.acme.com", "redis-cli -a $REDIS_PASSWORD ping"],
    "config-file-secret": ["Put _authToken=${NPM_TOKEN} in .npmrc", "hostname:port:database:username:password",
                           "Meeting 10:30:00 ends at 11:00"],
    "kubernetes-secret": ["kind: Secret objects are encrypted at rest",
                          "apiVersion: v1\nkind: ConfigMap\ndata:\n  REPLICAS: MTIz"],
    "base64-private-key": ["LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t is a base64 certificate header",
                           "The tls.key entry is rotated by cert-manager"],
    "discord-bot-token": ["Discord bot tokens have three dot-separated parts", "Mozilla.Firefox.Nightly"],
    "paired-secret": ["Twilio API keys start with SK and come with a secret",
                      "The AWS secret access key is shown only when the key is created"],
    "sentence-password": ["The password for the staging server is in the team vault",
                          "Door passcode is required after 22:00", "A pin: v2.3 of the chart",
                          "Router login is admin / see the label under the device"],
}
