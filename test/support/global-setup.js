const { setup } = require('./temp-audit');
module.exports = setup;
