import '../src/stack/tool-logging.js';
