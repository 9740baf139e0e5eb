FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# xmlsec1: pysaml2 signs and checks SAML single sign-on's messages with it.
RUN apt-get update && apt-get install -y --no-install-recommends xmlsec1 \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY apps ./apps
COPY config ./config
RUN pip install --no-cache-dir .
# .dockerignore keeps the virtualenv, the database, caches and other local files out.
COPY . .
# Static files as production serves them (DEBUG off): hashed names, compressed copies and
# the manifest staticfiles.json (settings: STORAGES). The key only lets the settings load
# for this step; the running container gets its own SECRET_KEY.
RUN DEBUG=0 SECRET_KEY=collectstatic-at-build-time-only python manage.py collectstatic --noinput
# The app runs as an unprivileged user, not root: the code and static files stay owned by
# root, so a compromised process can neither change them nor the rest of the image. It
# writes nowhere under /app (the database is PostgreSQL, via DATABASE_URL), and Celery
# beat keeps its schedule in /tmp.
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin relevo
USER relevo
EXPOSE 8000
CMD ["gunicorn", "--config", "config/gunicorn.conf.py"]
