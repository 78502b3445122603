"""The scrubbing corpus: credentials in their real formats that must be redacted, and ordinary technical text that
must come back unchanged.

Every credential is synthetic. Random parts come from `fake`, a generator seeded with the text before them, so the
values are stable between runs, never anyone's live secret (no provider would issue them: checksums and
signatures don't match), and no literal provider-format token sits in the repository for a secret scanner to flag.
The AWS pair is AWS's own documentation example.
"""

from __future__ import annotations

import base64
import string

from tests.data.credential_values import (
    BASE64,
    HEX,
    UPPER_DIGITS,
    URL_SAFE,
    Credential,
    fake,
    jwt,
    pem_body,
)

# AWS's documentation example pair (docs.aws.amazon.com): a real format, never a real key.
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AWS_TEMPORARY_ID = "ASIA" + fake("asia", 16, UPPER_DIGITS)
AWS_OTHER_SECRET = fake("aws-secret-2", 40, BASE64)


def _positives() -> list[Credential]:
    ghp = "ghp_" + fake("ghp", 36)
    gho = "gho_" + fake("gho", 36)
    fine_grained = "github_pat_" + fake("pat-a", 22) + "_" + fake("pat-b", 59)
    glpat = "glpat-" + fake("glpat", 20, URL_SAFE)
    xoxb = "xoxb-" + fake("xoxb-a", 12, string.digits) + "-" + fake("xoxb-b", 13, string.digits) + "-" + fake(
        "xoxb-c", 24)
    xapp = "xapp-1-A" + fake("xapp-a", 10, UPPER_DIGITS) + "-" + fake("xapp-b", 13, string.digits) + "-" + fake(
        "xapp-c", 64, HEX)
    slack_hook = "T" + fake("hook-t", 8, UPPER_DIGITS) + "/B" + fake("hook-b", 10, UPPER_DIGITS) + "/" + fake(
        "hook-x", 24)
    discord_id, discord_token = fake("discord-id", 18, string.digits), fake("discord", 68, URL_SAFE)
    npm = "npm_" + fake("npm", 36)
    zengram = "zgk_" + fake("zgk-id", 32, HEX) + "_" + fake("zgk", 43, URL_SAFE)
    pypi = "pypi-" + "AgEIcHlwaS5vcmc" + fake("pypi", 70, URL_SAFE)
    hf = "hf_" + fake("hf", 34, string.ascii_letters)
    openai_project = "sk-proj-" + fake("openai-proj", 74, URL_SAFE)
    openai_legacy = "sk-" + fake("openai-legacy", 48)
    anthropic = "sk-ant-api03-" + fake("anthropic", 93, URL_SAFE) + "AA"
    stripe = "sk_" + "live_" + fake("stripe-live", 24)
    stripe_restricted = "rk_" + "test_" + fake("stripe-rk", 24)
    stripe_webhook = "whsec_" + fake("whsec", 32)
    google = "AIza" + fake("google", 35, URL_SAFE)
    google_oauth = "GOCSPX-" + fake("gocspx", 28, URL_SAFE)
    twilio = "SK" + fake("twilio", 32, HEX)
    sendgrid = "SG." + fake("sg-a", 22, URL_SAFE) + "." + fake("sg-b", 43, URL_SAFE)
    mailgun = "key-" + fake("mailgun", 32, HEX)
    mailchimp = fake("mailchimp", 32, HEX) + "-us21"
    telegram = fake("telegram-id", 10, string.digits) + ":AA" + fake("telegram", 33, URL_SAFE)
    groq = "gsk_" + fake("groq", 52)
    digitalocean = "dop_v1_" + fake("do", 64, HEX)
    vault = "hvs." + fake("vault", 90, URL_SAFE)
    shopify = "shpat_" + fake("shopify", 32, HEX)
    azure_key = fake("azure", 86, BASE64) + "=="
    sas_sig = fake("sas", 43, BASE64).replace("+", "%2B").replace("/", "%2F") + "%3D"
    amz_signature = fake("amz", 64, HEX)
    rsa = pem_body("rsa")
    openssh = pem_body("openssh", 6)
    ec = fake("ec-json", 64, BASE64)
    pgp = pem_body("pgp", 5)
    putty = fake("putty-private", 64, BASE64)
    token_json = jwt("acme-bot")
    basic = base64.b64encode(b"ci-bot:" + fake("basic", 12).encode()).decode()
    session = fake("sts-session", 120, BASE64)
    return [
        Credential("aws-access-key-id", f"Deploy user for Globex uses access key {AWS_KEY_ID} in us-east-1",
                   AWS_KEY_ID),
        Credential("aws-access-key-id", f"Temporary credentials start with {AWS_TEMPORARY_ID} and expire in 1h",
                   AWS_TEMPORARY_ID),
        Credential("aws-secret-access-key", f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET,
                   kept="export AWS_SECRET_ACCESS_KEY="),
        Credential("aws-secret-access-key",
                   f"[default]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\n"
                   "region = eu-west-1", AWS_SECRET, kept="\naws_secret_access_key = "),
        Credential("aws-secret-access-key",
                   f'{{"Credentials": {{"AccessKeyId": "{AWS_TEMPORARY_ID}", "SecretAccessKey": "{AWS_OTHER_SECRET}", '
                   f'"SessionToken": "{session}"}}}}', AWS_OTHER_SECRET, kept='{"Credentials": {"AccessKeyId": "'),
        Credential("aws-secret-access-key", f"Keys for the CI user: {AWS_KEY_ID} / {AWS_OTHER_SECRET}",
                   AWS_OTHER_SECRET, kept="Keys for the CI user: "),
        Credential("aws-secret-access-key",
                   f"User name,Access key ID,Secret access key\nci-bot,{AWS_KEY_ID},{AWS_SECRET}", AWS_SECRET,
                   kept="User name,Access key ID,Secret access key\nci-bot,"),
        Credential("aws-secret-access-key", f"s3:\n  accessKeyId: {AWS_KEY_ID}\n  secretKey: {AWS_OTHER_SECRET}",
                   AWS_OTHER_SECRET, kept="\n  secretKey: "),
        Credential("openai-api-key", f"The OpenAI key for the Acme summariser is {openai_project}", openai_project),
        Credential("openai-api-key", f"Old services still read {openai_legacy} from the vault", openai_legacy),
        Credential("anthropic-api-key", f"The Claude worker authenticates with {anthropic}.", anthropic),
        Credential("github-token", f"CI pushes releases with {ghp} as the bot token", ghp),
        Credential("github-token", f"Fine-grained token for the docs repo: {fine_grained}", fine_grained),
        Credential("github-token", f"git remote set-url origin https://{gho}@github.com/acme/app.git", gho),
        Credential("gitlab-token", f"git clone https://oauth2:{glpat}@gitlab.com/acme/app.git", glpat),
        Credential("slack-token", f"The release bot posts with {xoxb} in #deploys", xoxb),
        Credential("slack-token", f"Socket mode needs the app-level token {xapp}", xapp),
        Credential("slack-webhook", f"Alerts go to https://hooks.slack.com/services/{slack_hook} (channel #ops)",
                   slack_hook),
        Credential("discord-webhook",
                   f"Community alerts: https://discord.com/api/webhooks/{discord_id}/{discord_token}", discord_token),
        Credential("npm-token", f"//registry.npmjs.org/:_authToken={npm}", npm),
        Credential("zengram-api-key", f"The acme agent reads the brain with {zengram}", zengram),
        Credential("pypi-token", f"twine upload -u __token__ -p {pypi} dist/*", pypi),
        Credential("huggingface-token", f'login(token="{hf}") before pulling the gated model', hf),
        Credential("stripe-key", f"Acme's Stripe live key is {stripe}, rotate it quarterly", stripe),
        Credential("stripe-key", f"The reporting job uses the restricted key {stripe_restricted}", stripe_restricted),
        Credential("stripe-key", f"Webhook signing secret: {stripe_webhook}", stripe_webhook),
        Credential("google-api-key", f"Maps calls use https://maps.googleapis.com/maps/api/js?key={google}", google),
        Credential("google-oauth-secret", f"OAuth client for the admin UI has secret {google_oauth}", google_oauth),
        Credential("jwt", f"Call the Initech API with the service JWT {token_json}", token_json),
        Credential("twilio-api-key", f"SMS alerts use Twilio API key {twilio}", twilio),
        Credential("sendgrid-api-key", f"Transactional mail goes through SendGrid with {sendgrid}", sendgrid),
        Credential("mailgun-api-key", f"Mailgun fallback key {mailgun} for the EU domain", mailgun),
        Credential("mailchimp-api-key", f"Newsletter sync uses {mailchimp}", mailchimp),
        Credential("telegram-bot-token", f"The on-call Telegram bot token is {telegram}", telegram),
        Credential("llm-provider-key", f"GROQ fallback for the classifier: {groq}", groq),
        Credential("service-token", f"doctl auth init -t {digitalocean}", digitalocean),
        Credential("service-token", f"VAULT_TOKEN {vault} was issued to the deploy job", vault),
        Credential("service-token", f"The Shopify admin app token {shopify} can write orders", shopify),
        Credential("azure-storage-key",
                   f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={azure_key};"
                   "EndpointSuffix=core.windows.net", azure_key),
        Credential("signed-url-signature",
                   "Share https://acmelogs.blob.core.windows.net/exports/q1.csv?sv=2022-11-02&se=2026-04-01T00%3A00"
                   f"%3A00Z&sr=b&sp=r&sig={sas_sig} with finance", sas_sig),
        Credential("signed-url-signature",
                   "https://acme-exports.s3.amazonaws.com/q1.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600"
                   f"&X-Amz-Signature={amz_signature}", amz_signature),
        Credential("connection-string-secret",
                   "Server=tcp:sql.acme.internal,1433;Database=billing;User Id=billing_app;"
                   "Password=Blue Anvil 7 Rockets;Encrypt=true;", "Blue Anvil 7 Rockets"),
        Credential("private-key",
                   f"Deploy key for the bastion host:\n-----BEGIN RSA PRIVATE KEY-----\n{rsa}\n"
                   "-----END RSA PRIVATE KEY-----\nstored in the vault", rsa,
                   kept="Deploy key for the bastion host:\n"),
        Credential("private-key",
                   f"-----BEGIN OPENSSH PRIVATE KEY-----\n{openssh}\n-----END OPENSSH PRIVATE KEY-----", openssh,
                   kept=""),
        Credential("private-key",
                   '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
                   f'{ec}\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@acme.iam.gserviceaccount.com"}}', ec,
                   kept='"client_email": "ci@acme.iam.gserviceaccount.com"}'),
        Credential("private-key", f"Pasted by mistake, cut off: -----BEGIN EC PRIVATE KEY-----\n{rsa[:100]}",
                   rsa[:100], kept="Pasted by mistake, cut off: "),
        Credential("pgp-private-key",
                   f"Release signing key:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp}\n=Ab12\n"
                   "-----END PGP PRIVATE KEY BLOCK-----", pgp, kept="Release signing key:\n"),
        Credential("putty-private-key",
                   "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ci\nPublic-Lines: 2\n"
                   f"AAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\n{putty}\nPrivate-MAC: {fake('mac', 64, HEX)}", putty,
                   kept=""),
        Credential("url-credentials", "Connect with postgres://billing:S3cr3tPa55@db.acme.internal:5432/invoices",
                   "S3cr3tPa55"),
        Credential("url-credentials", "DATABASE_URL=mysql://app:p@ss/w0rd@db.acme.internal:3306/app", "p@ss/w0rd"),
        Credential("url-credentials", "Sessions live in redis://:Sup3rRedisPw@cache.acme.internal:6379/0",
                   "Sup3rRedisPw"),
        Credential("url-credentials", "mongodb+srv://admin:Mong0!Pass:word@cluster0.ab1cd.mongodb.net/prod",
                   "Mong0!Pass:word"),
        Credential("url-credentials", "amqp://guest:Rabbit@Hole42@mq.acme.internal:5672/", "Rabbit@Hole42"),
        Credential("authorization-header", "Use Authorization: Bearer 9f8e7d for the legacy endpoint", "9f8e7d"),
        Credential("authorization-header", f"curl -H 'Authorization: Basic {basic}' https://api.acme.com", basic),
        Credential("authorization-header", 'headers = {"Authorization": "Token 4x7q2p"}', "4x7q2p"),
        Credential("bearer-token", "The smoke test sends Bearer a1b2c3d4e5 to staging", "a1b2c3d4e5"),
        Credential("basic-auth", f"Nginx expects Basic {basic} from the probe", basic),
        Credential("docker-auth", f'{{"auths": {{"registry.acme.com": {{"auth": "{basic}"}}}}}}', basic),
        Credential("labelled-secret", "password: correct horse battery staple", "correct horse battery staple",
                   kept="password: "),
        Credential("labelled-secret", "The staging database password: Winter2026!Acme", "Winter2026!Acme"),
        Credential("labelled-secret", "Root login is admin and the password is correcthorsebattery",
                   "correcthorsebattery"),
        Credential("labelled-secret", "DB_PASSWORD=hunter2hunter2 ./migrate.sh", "hunter2hunter2"),
        Credential("labelled-secret", "MYSQL_ROOT_PASSWORD=super_secret_pw in the compose file", "super_secret_pw"),
        Credential("labelled-secret", "database:\n  host: db.acme.internal\n  db_password: staging_only_pw\n",
                   "staging_only_pw"),
        Credential("labelled-secret", "PGPASSWORD=Pg!Admin#2026 psql -h db.acme.internal", "Pg!Admin#2026"),
        Credential("labelled-secret", "spring.datasource.password=Spr1ngBoot$ecret", "Spr1ngBoot$ecret"),
        Credential("labelled-secret", 'config {"client_secret": "s3cr3t-value-9f2"}', "s3cr3t-value-9f2"),
        Credential("labelled-secret", "The Acme API key: 7c4f2a9e1b3d8f6a", "7c4f2a9e1b3d8f6a"),
        Credential("labelled-secret", "DJANGO_SECRET_KEY = 'x9#kq!2v@m$w8r%t&z*p^l(c)s+d=e'",
                   "x9#kq!2v@m$w8r%t&z*p^l(c)s+d=e"),
        Credential("labelled-secret", "login?user=ops&password=Open5esame&next=/admin", "Open5esame"),
        Credential("labelled-secret", "vpn:\n  username: ops\n  password: \"tall trees 4 ever\"\n  mtu: 1400",
                   "tall trees 4 ever"),
        Credential("cli-flag-secret", "mysql --user=root --password='Dolphin 42!' billing", "Dolphin 42!"),
        Credential("cli-flag-secret", "vault login --token hvb.AAAAAQJ9x2Lm8sKq3", "hvb.AAAAAQJ9x2Lm8sKq3"),
        Credential("xml-secret", "<datasource><user>app</user><password>Xml-Pa55!</password></datasource>",
                   "Xml-Pa55!"),
        Credential("netrc-password", "machine api.acme.com login ci-bot password n3trcS3cret", "n3trcS3cret"),
    ]


POSITIVES: list[Credential] = _positives()

# Ordinary technical sentences: every one must come back exactly as written.
ORDINARY: list[str] = [
    "Token authentication failed on server alpha",
    "Token validation failed on server alpha",
    "Basic understanding of Kubernetes networking is expected for this role",
    "Bearer instruments such as bonds are transferred by delivery",
    "The password is required for every login",
    "Secret: classified",
    "We kept the sk-learn-compatible estimator API for the ranking model",
    "sk-learn-pipeline-for-text-classification is the repo name",
    "The password policy requires 12 characters",
    "We discussed the API key rotation schedule",
    "Reset your password via the portal; the API key page is under Settings > Developers",
    "The access token expires after 3600 seconds",
    "max_tokens: 4096 for the summariser",
    "Password: must be at least 12 characters long",
    "The secret sauce is our onboarding checklist",
    "The secret is out: Acme is moving to Kubernetes",
    "Commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 fixed the race in the dedup path",
    "The image digest is sha256:9b2c5e1f0a7d3c8b6e4f2a1d9c7b5e3f1a0d8c6b4e2f1a9d7c5b3e1f0a8d6c4b",
    "Request 123e4567-e89b-12d3-a456-426614174000 timed out in the gateway",
    "Clone it with git@github.com:acme/app.git",
    "Read https://medium.com/@alice/how-we-scaled-postgres before the review",
    "Connect to postgres://db.acme.internal:5432/app as the app role",
    "The admin UI runs on http://localhost:8080/@admin/settings",
    "Added ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq3k7xw9 ci@acme to authorized_keys",
    "-----BEGIN PUBLIC KEY----- blocks are safe to share",
    "-----BEGIN CERTIFICATE----- chains go in the trust store",
    "npm_config_registry points at the internal mirror",
    "The hf_hub_download helper caches models under ~/.cache",
    "Stripe publishable keys start with pk_live_ and are safe in the browser",
    "Use the Authorization header with a Bearer token from the login endpoint",
    "primary key: id, sort key: created_at",
    "The key: acme.deploy.target fact was superseded",
    "Deploy skipped: tests were flaky",
    "Acme Corp uses Next.js 14 with App Router",
    "Version 2.4.1-rc3 fixed the memory leak",
    "Meeting at 10:30 in room B-12",
    "We set PASSWORD_FILE=/run/secrets/db_password in compose",
    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.com/v1/memories',
    "export OPENAI_API_KEY=${OPENAI_API_KEY}",
    "api_key: <your-api-key>",
    "password: ******** (masked in the logs)",
    "The SKU-12345 anvils shipped to Globex",
    "xoxo from the whole team",
    "AKIA is the prefix of long-term AWS access key ids",
    "Use docker login --password-stdin to keep it out of shell history",
    "OAuth: 2.0 with PKCE for the mobile app",
    "auth: OAuth2-PKCE-flow for the mobile app",
    "signature: SHA256withRSA on every webhook",
    "auth: enabled on every route except /health",
    "The token bucket refills 60 tokens a minute",
    "Key: use the blue/green deploy for Acme",
    "Ping ops@acme.com about port 5432",
    'Our config has {"password_min_length": 12, "token_ttl": 3600}',
    "Passwords are rotated every 90 days",
    "See https://api.slack.com/messaging/webhooks for the webhook docs",
    "The eyJ prefix means base64-encoded JSON",
    "Authorization header missing on the retry path",
    "The staging password: [REDACTED] is shared in 1Password",
    "Basic auth is disabled; use OAuth instead",
    "The credentials: see the vault entry for Acme",
    "requirePassword: true in the login form config",
    "The AccountKey field was renamed in SDK v12",
]

# Per detector: text that looks like its format, or names it, but holds no secret. Each must come back unchanged.
NEAR_MISSES: dict[str, list[str]] = {
    "aws-access-key-id": ["AKIA is the prefix of long-term AWS access key ids",
                          "The IAM user id AIDAJQABLZS4A3QDU576Q is an identifier, not a key"],
    "aws-secret-access-key": ["Set aws_secret_access_key in ~/.aws/credentials, never in code",
                              "The SecretAccessKey field is 40 characters long"],
    "anthropic-api-key": ["sk-ant- keys belong to the Anthropic console", "Use the sk-ant-api03- prefix check"],
    "openai-api-key": ["We kept the sk-learn-compatible estimator API", "sk-learn-pipeline-for-text-classification",
                       "The sk-proj- prefix marks project keys"],
    "github-token": ["ghp_ tokens expire after 90 days", "Docs deploy from the gh_pages branch",
                     "Fine-grained tokens start with github_pat_"],
    "gitlab-token": ["glpat- tokens need the api scope", "Prefer gldt-style deploy tokens for pulls"],
    "slack-token": ["xoxo from the whole team", "xoxb- tokens belong to bots", "xapp-level tokens are for socket mode"],
    "slack-webhook": ["Post to https://hooks.slack.com/services/ with a JSON body",
                      "See https://api.slack.com/messaging/webhooks for the webhook docs"],
    "discord-webhook": ["https://discord.com/api/webhooks/ needs an id and a token",
                        "Read https://discord.com/developers/docs first"],
    "zengram-api-key": ["Scoped keys start with zgk_ and name their key id", "zgk_ keys are shown once"],
    "npm-token": ["npm_config_registry points at the internal mirror", "npm_package_version is set by npm run"],
    "pypi-token": ["PyPI tokens start with pypi-AgEI", "Upload to pypi-test before the real index"],
    "huggingface-token": ["The hf_hub_download helper caches models", "hf_transfer speeds up large downloads"],
    "stripe-key": ["Stripe publishable keys start with pk_live_ and are safe in the browser",
                   "The sk_live_ prefix is for live mode", "whsec_ secrets sign webhook payloads"],
    "google-api-key": ["AIza is the prefix of Google API keys", "A truncated AIzaSyA1 is useless"],
    "google-oauth-secret": ["GOCSPX- is the client secret prefix", "ya29. access tokens expire in an hour"],
    "jwt": ["The eyJ prefix means base64-encoded JSON", "eyJhbGciOiJIUzI1NiJ9 alone is only a JWT header"],
    "twilio-api-key": ["The SKU-12345 anvils shipped to Globex", "SK hynix memory in the new nodes"],
    "sendgrid-api-key": ["SendGrid keys start with SG. and have three parts", "SG.ROUTE.53 is a label, not a key"],
    "mailgun-api-key": ["A key-value store holds the sessions", "key-0123 rotation is due"],
    "mailchimp-api-key": ["us21 is the Mailchimp datacenter suffix", "The audience id is 0123abcd-us"],
    "telegram-bot-token": ["Call 1234567890 at 10:30", "The bot id 123456789:AA is truncated"],
    "llm-provider-key": ["gsk_ keys are Groq's", "We tried the xai-grok-2 model", "Replicate tokens start with r8_"],
    "service-token": ["dop_v1_ tokens are DigitalOcean's", "hvs. is a Vault service token prefix",
                      "shpat_ tokens are Shopify admin tokens"],
    "private-key": ["-----BEGIN PUBLIC KEY----- blocks are safe to share",
                    "-----BEGIN CERTIFICATE----- chains go in the trust store"],
    "pgp-private-key": ["-----BEGIN PGP PUBLIC KEY BLOCK----- is fine to publish",
                        "Verify the -----BEGIN PGP SIGNATURE----- block"],
    "putty-private-key": ["The PuTTY-User-Key-File format is documented", "Convert keys with puttygen"],
    "url-credentials": ["Read https://medium.com/@alice/how-we-scaled-postgres",
                        "The admin UI runs on http://localhost:8080/@admin/settings",
                        "Connect to postgres://db.acme.internal:5432/app",
                        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.acme.internal/app",
                        "Clone ssh://git@github.com/acme/app.git"],
    "authorization-header": ['curl -H "Authorization: Bearer $TOKEN" https://api.acme.com',
                             'headers = { Authorization = "Bearer ${API_TOKEN}" }',
                             'return {"Authorization": f"Bearer {admin_api_key}"}',
                             'authorization = request.headers.get("Authorization")',
                             "authorization: Optional[str] = None",
                             'headers={"Authorization": "Bearer token"}',
                             'For example `{"Proxy-Authorization": "Basic <username>:<password>"}`.',
                             "Authorization header missing on the retry path",
                             "authorization: required for every route but /health"],
    "bearer-token": ["Bearer instruments such as bonds", "Use a Bearer token from the login endpoint",
                     "Send Bearer <token> in the header"],
    "basic-auth": ["Basic understanding of Kubernetes", "Basic auth is disabled; use OAuth instead"],
    "docker-auth": ['{"auths": {"registry.acme.com": {"auth": ""}}}', '{"auth": "oauth2-pkce"}'],
    "azure-storage-key": ["The AccountKey field was renamed in SDK v12", "Put AccountKey=<key> in the template"],
    "connection-string-secret": ["Server=db;Database=app;Integrated Security=true;",
                                 "Server=db;Password=;User Id=sa;"],
    "signed-url-signature": ["https://acme.com/docs?sig=short", "The signature= parameter is added by the SDK"],
    "labelled-secret": ["The password is required for every login", "Secret: classified", "primary key: id",
                        "max_tokens: 4096", "The secret is out: Acme is moving to Kubernetes",
                        "Password: must be at least 12 characters long", "requirePassword: true",
                        "The staging password: [REDACTED] is shared in 1Password",
                        'schema = {"password": {"type": "string", "minLength": 12}}',
                        'client = Client(user=user, password=password, token=settings.api_token)',
                        'password=os.environ.get("DB_PASSWORD"), timeout=30',
                        "def connect(host: str, password: str | None = None) -> Connection:",
                        "self.key_password = key_password", "username, password = proxy_auth",
                        "credentials: Annotated[HTTPAuthorizationCredentials, Depends(security)]",
                        "assert url.password == expected",
                        "next_token: ListExecutionsPageToken = None",
                        '"fail_on_invalid_token": InvalidNextTokenException,',
                        "def add_token(self, token: tokenize.TokenInfo) -> None:",
                        "if token is tokenize.NAME or token is tokenize.OP:"],
    "cli-flag-secret": ["docker login --password-stdin", "gh auth login --token-file ~/.token",
                        "mysql --password $DB_PASSWORD"],
    "xml-secret": ["<password>${DB_PASSWORD}</password>", "<secret>classified</secret>"],
    "netrc-password": ["machine learning password policies", "machine api.acme.com login ci password $NETRC_PW"],
}

# The second part (issue 37's families, and more of every one): imported last, as it builds on the helpers above.
from tests.data.credential_corpus_more import MORE_NEAR_MISSES, MORE_ORDINARY, MORE_POSITIVES  # noqa: E402

POSITIVES += MORE_POSITIVES
ORDINARY += MORE_ORDINARY
for _name, _texts in MORE_NEAR_MISSES.items():
    NEAR_MISSES.setdefault(_name, []).extend(_texts)
