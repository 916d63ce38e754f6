"""appliance: offline voice and computer-use agent appliance."""
