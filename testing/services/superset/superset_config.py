# Superset's configuration for testing/services/superset.sh: a local tool on 127.0.0.1.
# Everything secret or machine-specific comes from the environment that superset.sh sets.
import os

SECRET_KEY = os.environ["HAADE_SUPERSET_SECRET_KEY"]
SQLALCHEMY_DATABASE_URI = os.environ["HAADE_SUPERSET_DB"]

# Plain HTTP on loopback: no HTTPS redirects or strict cookies.
TALISMAN_ENABLED = False
SESSION_COOKIE_SECURE = False
ENABLE_PROXY_FIX = False

# Figures are computed by Trino each time: a cache would show a table as it was, not as it is.
DATA_CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}
CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": 300}
FILTER_STATE_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": 86400}
EXPLORE_FORM_DATA_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": 86400}

# No examples, no telemetry, no calls out.
SUPERSET_LOAD_EXAMPLES = False
SCHEDULED_QUERIES = {}
FEATURE_FLAGS = {"ALERT_REPORTS": False}
LOG_LEVEL = os.environ.get("HAADE_SUPERSET_LOG_LEVEL", "WARNING")
ROW_LIMIT = 10000
SQLLAB_TIMEOUT = 120
SUPERSET_WEBSERVER_TIMEOUT = 120
