import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dev server proxies the server's own paths to a running Hearth (HEARTH_DEV_TARGET, default :8080), so
// discovery on the page's origin works as it does in production and hot reload covers the whole client.
const target = process.env.HEARTH_DEV_TARGET ?? 'http://localhost:8080';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline module-preload polyfill: the CSP forbids inline scripts and every supported browser has it.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    port: 5173,
    proxy: {
      '/v1': { target, changeOrigin: false },
      '/.well-known': { target },
      '/media': { target },
      '/test': { target },
      '/gateway': { target, ws: true },
    },
  },
});
