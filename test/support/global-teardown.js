const { teardown } = require('./temp-audit');
module.exports = teardown;
