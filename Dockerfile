# One image for every Mnemo service; docker-compose.yml picks the entry point per service
# (`node apps/<app>/dist/main.js`). Build: `docker compose build` (or docker-compose).
# BASE_IMAGE: a CUDA image with Node 20 and nvcc builds the GPU variant (the addon compiles CUDA
# when nvcc is present at build time); the default builds the CPU backend.
ARG BASE_IMAGE=node:20-bookworm
FROM ${BASE_IMAGE}

# Native addon toolchain (libs/native-cuda via cmake-js) and liburing for the SSD pool's
# io_uring path (linked statically: nothing of it is needed at run time).
# CUDA is compiled in only when nvcc is present, which it is not in this image: CPU backend.
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ cmake make python3 pkg-config liburing-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NX_NO_CLOUD=true NX_DAEMON=false NODE_ENV=production

# The workspace needs its sources to install (native-cuda builds in its install script),
# so everything is copied at once; .dockerignore keeps local builds and node_modules out.
COPY . .
# ensure.mjs = npm install (dev toolchain included despite NODE_ENV) + native addon build +
# `tsc -b`, exactly what `npm start` runs.
RUN node scripts/ensure.mjs && npm cache clean --force

# Services need no root; /data is for anything a service persists (e.g. SSD pool files).
RUN mkdir -p /data && chown node:node /data
USER node

CMD ["node", "apps/gateway/dist/main.js"]
